#pragma once
// Selection helpers shared by the baseline policies (local, random, streaming_llm, h2o,
// scissorhands, tova, snapkv, pyramidkv, adakv). They work on ragged caches too: "the last r
// tokens" of a head are its last r *valid* slots in arrival order (slot order, or the original
// positions once a SlotOrder::kAny cache has moved slots).
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "policies/layer_cache.hpp"

namespace kvbench::policies {

// Valid slots per head, [kv_heads] int64 on the CPU.
torch::Tensor valid_counts(const LayerCache& cache);

// True when no head holds more than `budget` valid slots (nothing to evict).
bool fits_budget(const LayerCache& cache, int64_t budget);

// [kv_heads, size] bool: the last `r` valid slots of every head.
torch::Tensor newest_valid(const LayerCache& cache, int64_t r);
// [kv_heads, size] bool: the first `s` valid slots of every head (attention sinks).
torch::Tensor oldest_valid(const LayerCache& cache, int64_t s);

// Keeps, per head, the `budget` best slots: protected slots first (if they outnumber the budget,
// the oldest of them), then the highest scores (ties: the older slot); invalid slots never win over valid ones. scores is
// [kv_heads, size] or [1, size] (the same ranking for every head); `protect` is [kv_heads, size]
// bool or undefined. On a homogeneous cache with one score row the same slots are kept on every
// head. No-op when the cache already fits.
void keep_best(LayerCache& cache, const torch::Tensor& scores, int64_t budget, const torch::Tensor& protect = {});

// 1D pooling along the last dimension with SnapKV's padding (kernel/2 each side, stride 1):
// "max" (padding never wins), "avg" (zero padding counted, as torch's avg_pool1d) or "none".
torch::Tensor pool_scores(const torch::Tensor& scores, const std::string& pooling, int64_t kernel);

}  // namespace kvbench::policies
