#pragma once
// The scoring half of a score-and-keep policy: per-slot importance built from attention
// statistics (H2O, TOVA, SnapKV, ScissorHands). A policy pairs a scorer with an allocation rule
// (uniform per head: ScoredPolicy; PyramidKV's per-layer budgets; Ada-KV's per-head budgets), so a
// wrapper can take any registered scorer by name (policies/scorer_registry.hpp).
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>

#include "policies/attention_stats.hpp"
#include "policies/layer_cache.hpp"
#include "policies/policy.hpp"

namespace kvbench::policies {

class SlotScorer {
 public:
  virtual ~SlotScorer() = default;
  virtual std::string name() const = 0;
  virtual StatsRequest wants() const = 0;
  virtual void begin(const SequenceInfo& info) {}
  // True when scores() depends only on per-slot state and statistics, never on slot order
  // (see Policy::slot_order_free).
  virtual bool slot_order_free() const { return false; }
  // Policy::observes_only_to_compress for the scorer: observe() keeps only what scores() of the
  // same forward reads (observed_row's rows).
  virtual bool observes_only_to_compress() const { return false; }
  // Called once per forward and layer with that forward's statistics (query heads).
  virtual void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) = 0;
  // How many of the newest tokens the policy keeps unconditionally under a budget of `budget`
  // (H2O's recent window, SnapKV's observation window, ScissorHands' r, TOVA: none).
  virtual int64_t recent(int64_t budget) const = 0;
  // True when the scores are per query head and the policy must repeat a GQA layer's K/V to the
  // query heads before selecting (GqaMode::kRepeat; the SnapKV scorer's default).
  virtual bool repeats_kv() const { return false; }
  // [kv_heads, size] float32 (one row per stored head; on the CPU, or on the cache's device where
  // noted), higher = more important. `protected_slots` [kv_heads, size] bool marks the protected
  // newest slots, newest_valid(cache, recent(budget)), which the policy has already computed
  // (SnapKV pools over the older slots only). The cache is mutable: a scorer's per-slot state
  // lives in it (LayerCache::state creates it on first use).
  virtual torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor& protected_slots) = 0;
};

// The row a scorer kept for `layer` in this forward's observe(); throws std::logic_error when
// compress() comes without observe() of the same forward (the row's length differs from the cache).
const torch::Tensor& observed_row(const std::map<int64_t, torch::Tensor>& rows, int64_t layer, const LayerCache& cache);

}  // namespace kvbench::policies
