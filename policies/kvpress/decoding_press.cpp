// DecodingPress (kvpress/presses/decoding_press.py): compression while generating, not at the
// prefill. Every `compression_interval` decode steps (per layer) the press scores the whole cache
// — prompt and generated tokens — and each head keeps its best `target_size` tokens (kvpress
// searches the compression ratio whose int(n · (1 − r)) is exactly target_size): kvbench's budget
// is that target_size. The prompt itself is never compressed, so between compressions a layer
// holds up to max(prompt, budget) + interval − 1 tokens (layer_budget). Runs under the `decode`
// protocol (the others never compress a decode step). kvpress's presses that read a window of
// queries see its buffered hidden states (the last `hidden_states_buffer_size` steps); kvbench's
// see the current step's query (exact for knorm, keydiff, streaming_llm and tova).
#include <map>

#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"

namespace kvbench::policies::kvpress {
namespace {

// `inner` is the policy that cuts the cache to the budget when an interval is up: ScoredPolicy
// around the press (ScorerPress.compress), or kvpress:adakv around it (an AdaKVPress base).
class DecodingPress : public Policy {
 public:
  DecodingPress(std::string name, std::unique_ptr<Policy> inner, const nlohmann::json& p)
      : name_(std::move(name)), inner_(std::move(inner)), interval_(p.at("compression_interval")) {}
  std::string name() const override { return name_; }
  StatsRequest wants() const override { return inner_->wants(); }
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    inner_->begin(info);
    steps_.clear();
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    inner_->observe(layer, cache, stats, phase);
  }
  int64_t layer_budget(int64_t layer) const override {
    if (info_.unlimited()) return info_.budget;
    return std::max(info_.prompt_len, inner_->layer_budget(layer)) + interval_ - 1;
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (phase != Phase::kDecode || ++steps_[layer] < interval_) return;
    steps_[layer] = 0;
    inner_->compress(layer, cache, phase);
  }

 private:
  std::string name_;
  std::unique_ptr<Policy> inner_;
  int64_t interval_;
  std::map<int64_t, int64_t> steps_;  // per layer: decode steps since the last compression
};

std::unique_ptr<Policy> make_decoding(const std::string& name, const std::string& press, const nlohmann::json& p) {
  return std::make_unique<DecodingPress>(name, std::make_unique<ScoredPolicy>(name, make_scorer(press, p)), p);
}

// DecodingPress(base_press=AdaKVPress(press)): the parameters but the interval go to kvpress:adakv.
std::unique_ptr<Policy> make_decoding_adakv(const std::string& name, const std::string& press, const nlohmann::json& p) {
  nlohmann::json ada = p;
  ada.erase("compression_interval");
  ada["press"] = press;
  return std::make_unique<DecodingPress>(name, make_policy("kvpress:adakv", ada), p);
}

const PolicyRegistration decoding_any_registration(
    {"kvpress:decoding", "Compression while generating: every compression_interval steps, the whole cache to the budget",
     "kvpress decoding_press.py",
     {params::Param::text("press", "kvpress:knorm", "the registered press that scores the cache (its parameters join these)"),
      compression_interval_param()},
     [](const nlohmann::json& p) { return make_decoding("kvpress:decoding", p.at("press"), p); }, "", "", "press"});

// The registry's DecodingPress keys around presses that score from the current step alone.
const bool decoding_registered = [] {
  for (const char* press : {"knorm", "keydiff", "streaming_llm", "tova", "qfilter"}) {
    const std::string name = std::string("kvpress:decoding_") + press, scorer = std::string("kvpress:") + press;
    PolicyRegistration({name, "DecodingPress(base_press=" + scorer + ")",
                        "kvpress decoding_press.py (PRESS_REGISTRY " + name.substr(8) + ")", {compression_interval_param()},
                        [name, scorer](const nlohmann::json& p) { return make_decoding(name, scorer, p); }, "", scorer});
  }
  return true;
}();

const PolicyRegistration decoding_adakv_any_registration(
    {"kvpress:decoding_adakv", "DecodingPress(base_press=AdaKVPress(press)): kvpress:decoding with Ada-KV's head budgets",
     "kvpress decoding_press.py, adakv_press.py",
     {params::Param::text("press", "kvpress:snapkv", "the registered press that scores the cache (its parameters join these)"),
      compression_interval_param(), alpha_safeguard_param()},
     [](const nlohmann::json& p) { return make_decoding_adakv("kvpress:decoding_adakv", p.at("press"), p); },
     kAdaReadsDevice, "", "press"});

// The registry's DecodingPress keys around AdaKVPress (its presses read the buffered hidden
// states' queries: docs/policies-kvpress.md says what kvbench reads instead).
const bool decoding_adakv_registered = [] {
  const std::pair<const char*, const char*> keys[] = {{"kvpress:decoding_adakv_snapkv", "kvpress:snapkv"},
                                                      {"kvpress:decoding_adakv_expected_attention_e2", "expected_attention"}};
  for (const auto& [name, press] : keys) {
    const std::string key = name, scorer = press;
    PolicyRegistration({key, "DecodingPress(base_press=AdaKVPress(" + scorer + "))",
                        "kvpress decoding_press.py, adakv_press.py (PRESS_REGISTRY " + key.substr(8) + ")",
                        {compression_interval_param(), alpha_safeguard_param()},
                        [key, scorer](const nlohmann::json& p) { return make_decoding_adakv(key, scorer, p); }, kAdaReadsDevice,
                        scorer, "",
                        scorer == "expected_attention" ? nlohmann::json{{"epsilon", 1e-2}} : nlohmann::json::object()});
  }
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
