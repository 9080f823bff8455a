#pragma once
// GQA attention over one layer's KV cache, producing on request the statistics eviction policies
// score with. Queries are processed in chunks so at most [heads, q_chunk, n] scores exist at once.
#include <torch/torch.h>

#include <functional>

#include "models/attention_path.hpp"
#include "models/rope.hpp"
#include "policies/attention_stats.hpp"
#include "policies/layer_cache.hpp"
#include "policies/position_mode.hpp"

namespace kvbench::models {

struct AttentionRequest {
  policies::PositionMode mode = policies::PositionMode::kOriginal;
  policies::StatsRequest stats;
  // Multiplier on the logits of a query that attends n keys (BUZZ with log n); empty = 1.
  std::function<double(int64_t)> logit_scale;
  int64_t max_score_elements = int64_t{1} << 24;  // bounds heads × q_chunk × n
  AttentionPath path = AttentionPath::kAuto;
};

struct AttentionResult {
  torch::Tensor output;  // [heads, T, head_dim]
  policies::AttentionStats stats;
};

// q: [heads, T, head_dim], the forward's T queries, already rotated in kOriginal mode and
// un-rotated in kCacheSlot mode. The cache already holds the forward's T new keys as its last T
// slots; query t may see every older slot and new slots up to its own.
AttentionResult attend(const torch::Tensor& q, const policies::LayerCache& cache, const Rope& rope,
                       const AttentionRequest& request);

// Whether attend() takes the fused kernel for the output of T > 1 queries over a cache with every
// slot valid, asking `want` on `path`: not where `want` needs statistics over every query (the
// output then comes from that pass), nor without a fused kernel (libtorch 1.13). The two paths may
// differ in the last bit, so forwards to be shared must agree on it.
bool fused_output(const policies::StatsRequest& want, int64_t T, AttentionPath path);

// The statistics attend() gives for `want` (kOriginal positions, no logit scale), without the
// output: bit for bit what a policy asking `want` sees. A shared prefill (models/prefill_share.hpp)
// computes each request's statistics this way from one forward.
policies::AttentionStats attention_statistics(const torch::Tensor& q, const policies::LayerCache& cache,
                                              const policies::StatsRequest& want,
                                              int64_t max_score_elements = AttentionRequest{}.max_score_elements);

}  // namespace kvbench::models
