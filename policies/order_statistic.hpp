#pragma once
// Order statistics of rows of scores, behind top_k_mask, lowest_scored_slots and the ragged
// window (per-step operations of most bounded policies). On the CPU a radix select over
// order-preserving integer keys: a few branch-free histogram passes instead of kthvalue's or
// topk's quickselect, which on rows of a few thousand scores costs ~8 ns an element in
// mispredicted branches. Exact: the same value as kthvalue, any order of equal values.
#include <torch/torch.h>

#include <cstddef>
#include <cstdint>

namespace kvbench::policies {

// values [rows, n]; 1 <= k <= n (1 = the largest). Returns [rows, 1], values' dtype and device,
// equal to values.kthvalue(n − k + 1, 1, true). Floating values must not be NaN; -0.0 and +0.0
// are one value (the result is then +0.0 on the CPU).
torch::Tensor kth_largest(const torch::Tensor& values, int64_t k);

// Unsigned keys in the values' order (a < b ⇔ key(a) < key(b)); -0.0 and +0.0 share a key.
// A float's key fills the upper 32 bits, so the lower 32 can break its ties.
uint64_t order_key(double v);
uint64_t order_key(float v);
uint64_t order_key(int64_t v);

// The k-th smallest of keys[0, n) (1 <= k <= n, 1 = the smallest). `keys` is scratch: it is
// left reordered.
uint64_t kth_smallest_key(uint64_t* keys, size_t n, size_t k);

}  // namespace kvbench::policies
