#pragma once
// The selection step most policies share: keep the top-scoring slots (optionally protecting the
// most recent ones) and hand the indices, in slot order, to LayerCache::keep.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "policies/layer_cache.hpp"

namespace kvbench::policies {

// Scores with invalid (ragged) slots set to -inf so they are never chosen.
torch::Tensor mask_invalid(const LayerCache& cache, torch::Tensor scores);

// Indices [rows, k] of the k largest scores per row, sorted ascending (slot order). Ties go to
// the earlier slot, so the choice is deterministic.
torch::Tensor top_k_slots(const torch::Tensor& scores, int64_t k);

// Indices [rows, e] of the e lowest scores per row, ties to the newest slot (largest position), so
// it evicts exactly what top_k_slots over the arrival order would not keep; `lowest_first` sorts
// each row lowest first (its first e' entries are then the e' lowest). scores [rows, n] float,
// positions [rows, n] int64 in [0, 2^31), distinct per row. O(n), no sort.
torch::Tensor lowest_scored_slots(const torch::Tensor& scores, const torch::Tensor& positions, int64_t e,
                                  bool lowest_first = false);

// [rows, n] bool: the k largest scores of each row, ties to the lower column: the slots
// top_k_slots returns, as a mask. O(n) per row (a k-th order statistic, then the ties at it by
// column), any floating dtype, scores not NaN.
torch::Tensor top_k_mask(const torch::Tensor& scores, int64_t k);

// lowest_scored_slots and top_k_mask off the CPU: tensor ops only, nothing read back to the host
// (callable on the CPU, where the tests compare them with the native paths).
torch::Tensor lowest_scored_slots_by_ops(const torch::Tensor& scores, const torch::Tensor& positions, int64_t e,
                                         bool lowest_first = false);
torch::Tensor top_k_mask_by_ops(const torch::Tensor& scores, int64_t k);

// The slots of each row in arrival order `perm` [rows, n] int64, the valid ones first, then the
// holes, each group still in arrival order (a stable partition, no sort): a ragged head's holes
// sit anywhere in a kAny cache, and pooling along arrival order must not take them for
// neighbours. valid [rows or 1, n] bool on perm's device. On the CPU one pass per row; elsewhere
// valid_first_by_ops.
torch::Tensor valid_first(const torch::Tensor& perm, const torch::Tensor& valid);
// The same partition by tensor ops (nothing read back to the host): a slot's destination is its
// rank among the valid slots, or among the holes after them, by a running count.
torch::Tensor valid_first_by_ops(const torch::Tensor& perm, const torch::Tensor& valid);
// [rows, count] int64: the columns of each row's first `count` true entries of `mask` [rows, n],
// ascending. nonzero() per row without reading its size back: the caller knows the count.
torch::Tensor first_true_columns(const torch::Tensor& mask, int64_t count);

// A tensor made on the host, on `device` without making the host wait: on CUDA the copy comes
// from pinned memory and does not block (a copy from pageable memory would make every decode step
// wait for the device); on other devices the copy is asked not to block.
torch::Tensor host_tensor_on(const torch::Tensor& host, const torch::Device& device);
// Slot indices chosen on the host, as a [1, n] int64 tensor on `device` (host_tensor_on).
torch::Tensor host_slots_on(const std::vector<int64_t>& slots, const torch::Device& device);

// Keeps `budget` slots per head: the last `recent` slots always, and the top-scoring others.
// scores is [kv_heads, size] (or [1, size] for the same choice on every head). No-op when
// the cache already fits. Needs a cache in arrival order (the last slots are the newest).
void keep_top_with_recent(LayerCache& cache, const torch::Tensor& scores, int64_t budget, int64_t recent);

}  // namespace kvbench::policies
