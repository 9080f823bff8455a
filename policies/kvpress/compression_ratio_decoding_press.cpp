// CompressionRatioDecodingPress (kvpress/presses/compression_ratio_decoding_press.py): DecodingPress
// whose target is a fraction of every token seen so far, not a fixed size. Every
// `compression_interval` decode steps (per layer) the press scores the whole cache and each head
// keeps max(1, int(seen · (1 − target_compression_ratio))) tokens, seen being the logical position
// of the step's token + 1 (the prompt and every generated token, evicted or not); a cache already
// at or below that is left alone. target_compression_ratio is the job's `--budget ratio:<r>`.
// The prompt is never compressed; runs under the `decode` protocol, as kvpress:decoding.
#include <map>

#include "policies/kvpress/decoding_press.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"

namespace kvbench::policies::kvpress {
namespace {

// ScorerPress.compress at the size the wrapper sets before each compression.
class TargetedScoredPolicy : public ScoredPolicy {
 public:
  using ScoredPolicy::ScoredPolicy;
  void set_target(int64_t target) { target_ = target; }
  int64_t layer_budget(int64_t) const override { return target_; }

 private:
  int64_t target_ = 1;
};

// kvpress subclasses DecodingPress; so does this: only the target differs. Between compressions a
// layer holds the last target plus the steps since (DecodingPress's layer_budget, which reads the
// inner policy's target).
class CompressionRatioDecodingPress : public DecodingPress {
 public:
  CompressionRatioDecodingPress(std::string name, TargetedScoredPolicy* inner, const nlohmann::json& p)
      : DecodingPress(std::move(name), std::unique_ptr<Policy>(inner), p), inner_(inner) {}
  void begin(const SequenceInfo& info) override {
    if (!info.compression_ratio)
      throw std::invalid_argument(name() + " keeps a fraction of the tokens seen (target_compression_ratio): give it as --budget ratio:<r>");
    DecodingPress::begin(info);
    decoded_.clear();
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (phase == Phase::kDecode) ++decoded_[layer];
    DecodingPress::compress(layer, cache, phase);
  }

 protected:
  // _resolve_target_size: max(1, int(seen * (1 - ratio))), seen = position_ids.max() + 1 of the step's token.
  void before_compression(int64_t layer) override {
    const double seen = static_cast<double>(info_.prompt_len + decoded_[layer]);
    inner_->set_target(std::max<int64_t>(1, static_cast<int64_t>(seen * (1.0 - *info_.compression_ratio))));
  }

 private:
  TargetedScoredPolicy* inner_;         // owned by DecodingPress
  std::map<int64_t, int64_t> decoded_;  // per layer: decode steps in all
};

const PolicyRegistration compression_ratio_decoding_registration(
    {"kvpress:compression_ratio_decoding",
     "Compression while generating: every compression_interval steps, the cache to a fraction of the tokens seen (--budget ratio:<r>)",
     "kvpress compression_ratio_decoding_press.py",
     {params::Param::text("press", "kvpress:knorm", "the registered press that scores the cache (its parameters join these)"),
      compression_interval_param()},
     [](const nlohmann::json& p) {
       const std::string name = "kvpress:compression_ratio_decoding", press = p.at("press");
       return std::make_unique<CompressionRatioDecodingPress>(name, new TargetedScoredPolicy(name, make_scorer(press, p)), p);
     },
     "", "", "press"});

}  // namespace
}  // namespace kvbench::policies::kvpress
