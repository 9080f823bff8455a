#pragma once
// A policy that ranks slots with a SlotScorer and keeps, per head, the protected newest tokens
// plus the best-scoring others up to the layer's budget (H2O, ScissorHands, TOVA, SnapKV,
// PyramidKV). Works under every protocol: compress() is a no-op while a layer fits its budget.
#include <memory>
#include <string>

#include "policies/gqa_mode.hpp"
#include "policies/keep_scored.hpp"
#include "policies/policy.hpp"
#include "policies/slot_scorer.hpp"

namespace kvbench::policies {

class ScoredPolicy : public Policy {
 public:
  ScoredPolicy(std::string name, std::unique_ptr<SlotScorer> scorer, bool same_for_all_heads = false)
      : name_(std::move(name)), scorer_(std::move(scorer)), same_for_all_heads_(same_for_all_heads) {}

  std::string name() const override { return name_; }
  StatsRequest wants() const override { return scorer_->wants(); }
  bool slot_order_free() const override { return scorer_->slot_order_free(); }
  bool observes_only_to_compress() const override { return scorer_->observes_only_to_compress(); }
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    scorer_->begin(info);
  }
  // Final: the scorer's observes_only_to_compress() speaks for the policy.
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) final {
    scorer_->observe(layer, cache, stats, phase);
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    const int64_t budget = std::max<int64_t>(1, layer_budget(layer));
    if (fits_budget(cache, budget)) return;
    if (scorer_->repeats_kv()) repeat_to_query_heads(cache, info_);
    const int64_t recent = std::min(budget, recent_slots(budget));
    const torch::Tensor window = newest_valid(cache, recent);
    torch::Tensor scores = scorer_->scores(layer, cache, window);
    // TOVA: one ranking for every head, the scores averaged over heads.
    if (same_for_all_heads_) scores = scores.mean(0, /*keepdim=*/true);
    keep_best(cache, scores, budget, window);
  }

 protected:
  virtual int64_t recent_slots(int64_t budget) const { return scorer_->recent(budget); }
  SlotScorer& scorer() { return *scorer_; }

 private:
  std::string name_;
  std::unique_ptr<SlotScorer> scorer_;
  bool same_for_all_heads_;
};

}  // namespace kvbench::policies
