#pragma once
// RoCo's unified view, first axis (roco-easykv.txt §4.1): how a slot's importance is scored.
//   random   Random deletion (the lower bound)
//   recency  the farthest token is the least important (window attention, StreamLLM)
//   aas      accumulative attention score (H2O)
//   aqas     accumulative quantised attention: +1 whenever the attention is above the query's
//            average 1/visible (ScissorHands as RoCo describes it)
//   ltas     the last token's attention (TOVA)
//   mas      mean attention score = accumulated ÷ times attended (RoCo)
// Scores are per KV head over the group-averaged attention (§5.3 "group-wise averaged attention
// score"); higher = more important. The per-slot ledger they read lives in the LayerCache, so it
// is gathered with the keys on every eviction.
#include <torch/torch.h>

#include <random>
#include <string>

#include "policies/attention_stats.hpp"
#include "policies/head_reduce.hpp"
#include "policies/layer_cache.hpp"

namespace kvbench::policies {

enum class Importance { kRandom, kRecency, kAAS, kAQAS, kLTAS, kMAS };
Importance parse_importance(const std::string& name);  // random | recency | aas | aqas | ltas | mas
const char* to_string(Importance importance);

// Per-slot ledger, state names in the LayerCache, each [kv_heads, n] float32:
//   "acc" Σ ā, "acc_sq" Σ ā², "count" queries that attended the slot, "above" Σ [ā > 1/visible],
//   "last" the last query's ā.
struct AttentionLedger {
  bool sums = false, squares = false, above_mean = false, last = false;
  StatsRequest request() const;
  // Adds this forward's statistics (query heads reduced to KV heads with `reduce`).
  void update(LayerCache& cache, const AttentionStats& stats, HeadReduce reduce) const;
};
AttentionLedger ledger_for(Importance importance);

// [kv_heads, n] float64 on the cache's device (random draws are made on the host and copied).
torch::Tensor importance_scores(Importance importance, LayerCache& cache, std::mt19937_64& rng);

// Standard deviation of the attention each slot received: sqrt(Σā²/c − (Σā/c)²) (§4.3).
torch::Tensor attention_std(LayerCache& cache);

}  // namespace kvbench::policies
