#pragma once
// How a policy that scores per query head stores a GQA layer (SnapKV, PyramidKV, Ada-KV, K-VEC):
//  - repeat: K/V are repeated to the query heads before compressing and every query head keeps its
//    own tokens (the official SnapKV `mistral_hijack_4_37.py`, KVCache-Factory's default
//    `kv_cache_granularity: query_head`, Ada-KV without `gqa_support`). The layer then stores
//    n_heads heads: memory grows by the group size, and logical_bytes() counts every stored head.
//  - reduce: one selection per KV head from its query heads' scores reduced with `head_reduce`
//    (KVCache-Factory's `kv_head` mode with `gqa_score_agg`, Ada-KV's `gqa_support` with
//    `gqa_func`, kvpress). The layer keeps the model's KV heads.
// Attention needs no change: a layer that stores n_heads heads is attended as MHA.
#include <torch/torch.h>

#include <string>

#include "base/param.hpp"

#include "policies/layer_cache.hpp"
#include "policies/policy.hpp"

namespace kvbench::policies {

enum class GqaMode { kRepeat, kReduce };

GqaMode parse_gqa_mode(const std::string& name);  // repeat | reduce
// The `gqa` parameter, declared once for every policy that selects per query head.
params::Param gqa_param();
const char* to_string(GqaMode mode);

// Replaces `cache` by one that stores the sequence's query heads: stored head h becomes heads
// h·g .. h·g + g − 1 (as repeat_kv), with their keys, values and positions. No-op for MHA or once
// expanded. A ragged cache is a std::logic_error; per-slot state is not carried over (the policies
// that repeat keep none: they score from the forward's window rows).
void repeat_to_query_heads(LayerCache& cache, const SequenceInfo& info);

// Appends the model's K/V ([model kv heads, T, head_dim]) to `cache`, repeating each head to the
// copies a repeated layer stores (the runtime's append for every layer).
void append_model_heads(LayerCache& cache, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& positions);

// Each row along dim 0 repeated `group` times in place (repeat_interleave(group, 0)) by one
// expand and copy: libtorch 1.13's repeat_interleave goes through a repeats tensor whose sum it
// reads back to the host.
torch::Tensor repeat_rows(const torch::Tensor& t, int64_t group);

}  // namespace kvbench::policies
