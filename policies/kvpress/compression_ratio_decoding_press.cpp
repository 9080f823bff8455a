// CompressionRatioDecodingPress (kvpress/presses/compression_ratio_decoding_press.py): DecodingPress
// whose target is a fraction of every token seen so far, not a fixed size. Every
// `compression_interval` decode steps (per layer) the press scores the whole cache and each head
// keeps max(1, int(seen · (1 − target_compression_ratio))) tokens, seen being the logical position
// of the step's token + 1 (the prompt and every generated token, evicted or not); a cache already
// at or below that is left alone. target_compression_ratio is the job's `--budget ratio:<r>`.
// The prompt is never compressed; runs under the `decode` protocol, as kvpress:decoding.
#include <map>

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

class CompressionRatioDecodingPress : public Policy {
 public:
  CompressionRatioDecodingPress(std::string name, std::unique_ptr<TargetedScoredPolicy> inner, const nlohmann::json& p)
      : name_(std::move(name)), inner_(std::move(inner)), interval_(p.at("compression_interval")) {}
  std::string name() const override { return name_; }
  StatsRequest wants() const override { return inner_->wants(); }
  void begin(const SequenceInfo& info) override {
    if (!info.compression_ratio)
      throw std::invalid_argument(name_ + " keeps a fraction of the tokens seen (target_compression_ratio): give it as --budget ratio:<r>");
    Policy::begin(info);
    inner_->begin(info);
    steps_.clear();
    decoded_.clear();
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    inner_->observe(layer, cache, stats, phase);
  }
  // Between compressions a layer holds the last target (at most today's) plus the steps since.
  int64_t layer_budget(int64_t layer) const override {
    const auto it = decoded_.find(layer);
    return std::max(info_.prompt_len, target(seen(it == decoded_.end() ? 0 : it->second))) + interval_ - 1;
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (phase != Phase::kDecode) return;
    ++decoded_[layer];
    if (++steps_[layer] < interval_) return;
    steps_[layer] = 0;
    inner_->set_target(target(seen(decoded_[layer])));
    inner_->compress(layer, cache, phase);
  }

 private:
  // position_ids.max() + 1 of the step's token.
  int64_t seen(int64_t decoded) const { return info_.prompt_len + decoded; }
  // _resolve_target_size: max(1, int(seen * (1 - ratio))).
  int64_t target(int64_t seen) const {
    return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(seen) * (1.0 - *info_.compression_ratio)));
  }

  std::string name_;
  std::unique_ptr<TargetedScoredPolicy> inner_;
  int64_t interval_;
  std::map<int64_t, int64_t> steps_;    // per layer: decode steps since the last compression
  std::map<int64_t, int64_t> decoded_;  // per layer: decode steps in all
};

const PolicyRegistration compression_ratio_decoding_registration(
    {"kvpress:compression_ratio_decoding",
     "Compression while generating: every compression_interval steps, the cache to a fraction of the tokens seen (--budget ratio:<r>)",
     "kvpress compression_ratio_decoding_press.py",
     {params::Param::text("press", "kvpress:knorm", "the registered press that scores the cache (its parameters join these)"),
      compression_interval_param()},
     [](const nlohmann::json& p) {
       const std::string press = p.at("press");
       return std::make_unique<CompressionRatioDecodingPress>(
           "kvpress:compression_ratio_decoding", std::make_unique<TargetedScoredPolicy>("kvpress:compression_ratio_decoding", make_scorer(press, p)), p);
     },
     "", "", "press"});

}  // namespace
}  // namespace kvbench::policies::kvpress
