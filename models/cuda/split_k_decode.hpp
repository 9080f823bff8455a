#pragma once
// kvbench's split-K (flash-decoding) attention for one decoding query on CUDA
// (models/cuda/split_k_decode.cu): built only where CMake finds a CUDA compiler beside a CUDA
// libtorch (KVBENCH_SPLIT_K_DECODE); models/attention.cpp takes it for AttentionPath::kSplitK.
#include <torch/torch.h>

namespace kvbench::models::cuda {

// Whether split_k_decode() takes this query: one query on a CUDA device, float32, float16 or
// bfloat16 throughout, at most kMaxGroup query heads per KV head, key and value rows contiguous.
bool split_k_decode_applies(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V);

// q: [heads, 1, head_dim]; K, V: [kv_heads, n, head_dim]; valid: [kv_heads, n] bool, or undefined
// where every slot is valid. Returns [heads, 1, head_dim]: softmax(q·Kᵀ/√head_dim)·V per head.
torch::Tensor split_k_decode(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V,
                             const torch::Tensor& valid);

// Calls of split_k_decode() so far in this process: a test's proof that a path took the kernel.
int64_t split_k_decode_calls();

}  // namespace kvbench::models::cuda
