#include "policies/kvpress/press.hpp"

#include "policies/head_reduce.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"

namespace kvbench::policies::kvpress {
namespace {

void register_press(const PressInfo& info, const std::string& name) {
  ScorerRegistration({name, info.params, info.make});
  PolicyRegistration({name, info.summary, info.source, {},
                      [name](const nlohmann::json& p) { return std::make_unique<ScoredPolicy>(name, make_scorer(name, p)); },
                      "", name});
}

// The registry's no_press: kvpress with compression_ratio 0, the full cache.
const PolicyRegistration no_press_registration(
    {"kvpress:no_press", "No compression (PRESS_REGISTRY no_press): the full cache", "kvpress evaluate_registry.py",
     {},
     [](const nlohmann::json&) { return make_policy("full"); }});

}  // namespace

PressRegistration::PressRegistration(PressInfo info) {
  if (info.prefixed) register_press(info, kPrefix + info.key);
  if (info.bare_name) register_press(info, info.key);
}

params::Params wrapper_params(const WrapperInfo& info) {
  params::Params own = info.params;
  if (info.press.empty())
    own.insert(own.begin(), params::Param::text("press", info.default_press, "the registered press wrapped (its parameters join these)"));
  return own;
}

void register_wrapper(const WrapperInfo& info) {
  PolicyRegistration({info.name, info.kind + " around " + (info.press.empty() ? std::string("a press") : info.press) + ": " + info.what,
                      info.source, wrapper_params(info),
                      [name = info.name, press = info.press, make = info.make](const nlohmann::json& p) {
                        return make(name, make_scorer(press.empty() ? p.at("press").get<std::string>() : press, p), p);
                      },
                      info.reads_device, info.press, info.press.empty() ? "press" : "", info.press_defaults});
}

params::Param compression_interval_param() {
  return params::Param::integer("compression_interval", 512, "decode steps between two compressions (per layer)", 1);
}

params::Param alpha_safeguard_param() {
  return params::Param::number("alpha_safeguard", 0.2, "each head keeps at least int(B·alpha) of its best tokens", 0, 1);
}

int64_t ada_head_capacity(const SequenceInfo& info, double alpha) {
  if (info.unlimited()) return info.budget;
  const int64_t heads = std::max<int64_t>(info.n_kv_heads, 1);
  return heads * info.budget - (heads - 1) * ada_safe(info.budget, alpha);
}

torch::Tensor mean_over_groups(const torch::Tensor& scores, int64_t kv_heads) {
  return reduce_to_kv_heads(scores, kv_heads, HeadReduce::kMean);
}

}  // namespace kvbench::policies::kvpress
