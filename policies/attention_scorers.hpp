#pragma once
// Per-slot importance scores built from attention statistics: the scoring half of H2O, TOVA,
// SnapKV and ScissorHands. The baseline policies pair a scorer with an allocation rule (uniform
// per head, PyramidKV's per-layer budgets, Ada-KV's per-head budgets), so Ada-KV can wrap any of
// them (`scorer` parameter) without re-implementing the scoring.
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>

#include "policies/attention_stats.hpp"
#include "policies/head_reduce.hpp"
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
  // (SnapKV pools over neighbouring tokens, which it finds by arrival order; see Policy::slot_order_free).
  virtual bool slot_order_free() const { return false; }
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
  // (SnapKV pools over the older slots only).
  virtual torch::Tensor scores(int64_t layer, const LayerCache& cache, const torch::Tensor& protected_slots) = 0;
};

// name: h2o | tova | snapkv | scissorhands. `params` holds the scorer's parameters (the
// policy's resolved parameters; unknown keys are ignored here, the registry rejected them).
std::unique_ptr<SlotScorer> make_scorer(const std::string& name, const nlohmann::json& params);

// The parameters (with defaults) each scorer reads, for policies that embed one.
nlohmann::json scorer_defaults(const std::string& name);

}  // namespace kvbench::policies
