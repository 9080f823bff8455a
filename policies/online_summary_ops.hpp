#pragma once
// BumbleBee's online summary (bumblebee.txt Alg. 2) with tensor ops on the cache's device, the
// path a GPU takes: the same choices as OnlineSummary (online_summary.hpp), and nothing read back
// to the host. What the host needs is known from sizes: how many tokens join (those that left
// the window) and how many members are discarded (the summary's surplus), the same on every
// head. Per KV head, the members' unit keys and similarities live by member-matrix row as in
// OnlineSummary; a discard recomputes every member's nearest other member by one masked max
// (O(k²) per head, where the host path updates only the members that lost their nearest), and
// picks the least conditional gain by argmin (ties: the oldest member, as the host path).
#include <torch/torch.h>

#include <cstdint>

#include "policies/layer_cache.hpp"
#include "policies/submodular.hpp"

namespace kvbench::policies {

class OnlineSummaryOps {
 public:
  OnlineSummaryOps(double lambda, submodular::Concave phi) : lambda_(lambda), phi_(phi) {}

  // As OnlineSummary::discard; `acc` [kv_heads, size] is the accumulated attention by slot, on
  // the cache's device.
  torch::Tensor discard(LayerCache& cache, const torch::Tensor& acc, int64_t window, int64_t k);

 private:
  // Buffers for `rows` member-matrix rows per head (grown by a quarter, as OnlineSummary's).
  void reserve(int64_t rows, int64_t kv_heads, int64_t head_dim, const torch::Device& device);
  // Rows for the tokens at `slots` [kv_heads, j] that join: their unit keys, their similarities
  // with every row, and their membership. Returns the rows [kv_heads, j].
  torch::Tensor join(const torch::Tensor& keys, const torch::Tensor& slots);
  // Per head, the S' position [kv_heads, 1] of the member of least conditional gain.
  torch::Tensor least_gain(const torch::Tensor& rows, const torch::Tensor& weights) const;

  double lambda_;
  submodular::Concave phi_;
  int64_t members_ = -1;  // per head (the same on every head); -1: not started
  int64_t kv_heads_ = 0;
  int64_t capacity_ = 0;
  torch::Tensor sim_;     // [kv_heads, capacity, capacity] float64, by row
  torch::Tensor unit_;    // [kv_heads, capacity, head_dim] float64
  torch::Tensor member_;  // [kv_heads, capacity] bool: the row holds a member
  torch::Tensor itself_;  // [capacity, capacity] bool: the diagonal (a member is not its own nearest)
};

}  // namespace kvbench::policies
