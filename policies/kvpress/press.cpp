#include "policies/kvpress/press.hpp"

#include "policies/head_reduce.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"

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

ArrivalOrder::ArrivalOrder(const LayerCache& cache) {
  if (cache.in_arrival_order() && cache.all_valid()) return;
  torch::Tensor perm = cache.arrival_order().expand({cache.kv_heads(), cache.size()});
  perm_ = cache.all_valid() ? perm.contiguous() : valid_first(perm, cache.valid());
}

torch::Tensor ArrivalOrder::gather(const torch::Tensor& per_slot) const {
  if (!perm_.defined()) return per_slot;
  torch::Tensor index = perm_;
  while (index.dim() < per_slot.dim()) index = index.unsqueeze(-1);
  std::vector<int64_t> sizes = per_slot.sizes().vec();
  return per_slot.gather(1, index.expand(sizes));
}

torch::Tensor ArrivalOrder::scatter(const torch::Tensor& per_token) const {
  if (!perm_.defined()) return per_token;
  return torch::empty_like(per_token).scatter_(1, perm_, per_token);
}

torch::Tensor mean_over_groups(const torch::Tensor& scores, int64_t kv_heads) {
  return reduce_to_kv_heads(scores, kv_heads, HeadReduce::kMean);
}

}  // namespace kvbench::policies::kvpress
