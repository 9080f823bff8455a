#pragma once
// GQA: scores come per query head; the cache evicts per KV head. A group's query heads are
// reduced to their KV head (mean by default, as SnapKV/PyramidKV's GQA ports do).
#include <torch/torch.h>

#include <string>

#include "base/param.hpp"

namespace kvbench::policies {

enum class HeadReduce { kMean, kMax, kSum };

HeadReduce parse_head_reduce(const std::string& name);  // mean | max | sum
// The `head_reduce` parameter, declared once for every policy that reduces query heads.
params::Param head_reduce_param();
const char* to_string(HeadReduce mode);

// scores [n_heads, ...] -> [n_kv_heads, ...]; query heads h*g .. h*g+g-1 form KV head h.
torch::Tensor reduce_to_kv_heads(const torch::Tensor& scores, int64_t n_kv_heads, HeadReduce mode);

}  // namespace kvbench::policies
