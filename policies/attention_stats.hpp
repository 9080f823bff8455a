#pragma once
// The attention statistics a policy can ask the attention code for. They are computed chunk by
// chunk over the queries of one forward, so no more than [heads, q_chunk, n] is ever materialised.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace kvbench::policies {

struct StatsRequest {
  bool last_row = false;        // softmax row of the forward's last query
  bool column_sums = false;     // Σ_q a[h,q,k] over the forward's queries
  bool column_sq_sums = false;  // Σ_q a[h,q,k]²
  bool column_max = false;      // max_q a[h,q,k] (kvpress's KVCompose: each token's largest attention)
  int64_t window = 0;           // rows of the forward's last `window` queries
  // Over the group-averaged attention of each KV head (GQA "group-wise averaged attention",
  // RoCo §5.3): Σ_q ā[g,q,k]² and Σ_q [ā[g,q,k] > 1/visible(q)] (ScissorHands' binary
  // above-average quantisation).
  bool kv_column_sq_sums = false;
  bool kv_column_above_mean = false;
  // Not attention statistics but what the model fed to attention: the forward's queries before
  // RoPE and the layer's rotation (kvpress's ExpectedAttentionPress).
  bool queries_before_rope = false;
  bool output_projection = false;  // the layer's W_o (kvpress's CriticalKVPress)
  bool hidden_states = false;      // the attention's input (kvpress's KVzapPress)
  bool queries = false;            // the forward's queries as attention used them (R-KV's query cache)
  bool projections = false;        // the q_proj / k_proj outputs (kvpress's DuoAttention scored on the fly)

  // Whether attention must compute statistics (queries_before_rope comes from the model alone).
  bool any() const {
    return last_row || column_sums || column_sq_sums || column_max || window > 0 || kv_column_sq_sums ||
           kv_column_above_mean;
  }
  StatsRequest& merge(const StatsRequest& other);
  bool operator==(const StatsRequest& other) const;
  bool operator!=(const StatsRequest& other) const { return !(*this == other); }
};

// Every tensor is over the *query* heads and the layer's slots after this forward's keys were
// appended: n = cache size. Undefined when not requested. Float32 whatever the model dtype.
struct AttentionStats {
  torch::Tensor last_row;        // [heads, n]
  torch::Tensor column_sums;     // [heads, n]
  torch::Tensor column_sq_sums;  // [heads, n]
  torch::Tensor column_max;      // [heads, n]
  torch::Tensor window_rows;     // [heads, w, n], w = min(window, queries)
  torch::Tensor kv_column_sq_sums;     // [kv_heads, n]
  torch::Tensor kv_column_above_mean;  // [kv_heads, n]
  torch::Tensor column_counts;   // [n] how many of this forward's queries could see each slot
  int64_t n_queries = 0;
  // Requested with queries_before_rope: [heads, T, head_dim] float32, the forward's queries as
  // projected (and q-normed), before the rotation; and the layer's RoPE applied to x [rows, n,
  // head_dim] at positions first .. first + n − 1.
  torch::Tensor queries_before_rope;
  std::function<torch::Tensor(const torch::Tensor& x, int64_t first)> rotate;
  // Requested with output_projection: the layer's attention output projection W_o [dim, heads ·
  // head_dim] (transformers' o_proj.weight), in the model's dtype, on its device.
  torch::Tensor output_projection;
  // Requested with hidden_states: [T, dim], the forward's attention input (after the layer's input
  // RMSNorm, what kvpress's hooks receive as hidden_states), in the model's dtype, on its device.
  torch::Tensor hidden_states;
  // Requested with queries: [heads, T, head_dim] float32, the queries attention scored with (after
  // RoPE, as R-KV's query cache holds them).
  torch::Tensor queries;
  // Requested with projections: [heads, T, head_dim] and [kv_heads, T, head_dim] float32, the
  // layer's q_proj and k_proj outputs before any q/k norm and RoPE (with `rotate`, the layer's RoPE).
  torch::Tensor projected_queries;
  torch::Tensor projected_keys;
  // The forward's token ids (R-KV triggers on the token fed); null where the caller has none.
  const std::vector<int64_t>* tokens = nullptr;
  // One past the largest original position in the cache (the forward's last token's + 1), known
  // on the host without reading the positions; 0 when the caller does not say.
  int64_t position_end = 0;
};

}  // namespace kvbench::policies
