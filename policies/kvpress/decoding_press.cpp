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
#include "policies/scorer_registry.hpp"

namespace kvbench::policies::kvpress {
namespace {

class DecodingPress : public WrapperPolicy {
 public:
  DecodingPress(std::string name, std::unique_ptr<SlotScorer> wrapped, const nlohmann::json& p)
      : WrapperPolicy(std::move(name), std::move(wrapped)), interval_(p.at("compression_interval")) {}
  void begin(const SequenceInfo& info) override {
    WrapperPolicy::begin(info);
    steps_.clear();
  }
  int64_t layer_budget(int64_t) const override {
    if (info_.unlimited()) return info_.budget;
    return std::max(info_.prompt_len, info_.budget) + interval_ - 1;
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (phase != Phase::kDecode || ++steps_[layer] < interval_) return;
    steps_[layer] = 0;
    const int64_t budget = std::max<int64_t>(1, info_.budget);
    if (fits_budget(cache, budget)) return;
    const torch::Tensor window = newest_valid(cache, std::min(budget, press().recent(budget)));
    keep_best(cache, press().scores(layer, cache, window), budget, window);
  }

 private:
  int64_t interval_;
  std::map<int64_t, int64_t> steps_;  // per layer: decode steps since the last compression
};

const params::Param kInterval =
    params::Param::integer("compression_interval", 512, "decode steps between two compressions (per layer)", 1);

std::unique_ptr<Policy> make_decoding(const std::string& name, const std::string& press, const nlohmann::json& p) {
  return std::make_unique<DecodingPress>(name, make_scorer(press, p), p);
}

const PolicyRegistration decoding_any_registration(
    {"kvpress:decoding", "Compression while generating: every compression_interval steps, the whole cache to the budget",
     "kvpress decoding_press.py",
     {params::Param::text("press", "kvpress:knorm", "the registered press that scores the cache (its parameters join these)"),
      kInterval},
     [](const nlohmann::json& p) { return make_decoding("kvpress:decoding", p.at("press"), p); }, "", "", "press"});

// The registry's DecodingPress keys around presses that score from the current step alone.
const bool decoding_registered = [] {
  for (const char* press : {"knorm", "keydiff", "streaming_llm", "tova"}) {
    const std::string name = std::string("kvpress:decoding_") + press, scorer = std::string("kvpress:") + press;
    PolicyRegistration({name, "DecodingPress(base_press=" + scorer + ")",
                        "kvpress decoding_press.py (PRESS_REGISTRY " + name.substr(8) + ")", {kInterval},
                        [name, scorer](const nlohmann::json& p) { return make_decoding(name, scorer, p); }, "", scorer});
  }
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
