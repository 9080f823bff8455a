#pragma once
// The split-K decoding attention's launch, free of libtorch so nvcc compiles it alone (and the
// CPU build's Torch2Branches.Compile checks it without a GPU): models/cuda/split_k_decode.cu.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kvbench::models::cuda {

constexpr int kMaxGroup = 16;  // query heads per KV head the kernel keeps in registers

enum class ElementType { kFloat32, kFloat16, kBFloat16 };

// One decoding query of kv_heads × group query heads over n cached slots; strides in elements,
// each key and value row contiguous over head_dim.
struct SplitKDecodeArgs {
  int kv_heads = 0, group = 0, head_dim = 0;
  int64_t n = 0;
  int64_t split_len = 0;  // keys a block scores
  int splits = 0;         // ceil(n / split_len)
  float scale = 1.f;      // 1/sqrt(head_dim)
  int64_t key_head_stride = 0, key_row_stride = 0, value_head_stride = 0, value_row_stride = 0;
  int64_t valid_head_stride = 0;
};

// The split: enough (KV head, split) blocks to fill the card four times over, each at most as
// long as the shared memory of its scores allows.
void plan_splits(SplitKDecodeArgs& args, int multiprocessors);

size_t split_k_shared_bytes(const SplitKDecodeArgs& args);

// Floats of workspace the launch needs: per (KV head, split, query head) a maximum, a sum and a
// head_dim partial output.
inline int64_t split_k_workspace_floats(const SplitKDecodeArgs& args) {
  return static_cast<int64_t>(args.kv_heads) * args.splits * args.group * (2 + args.head_dim);
}

// q: [kv_heads·group, head_dim] contiguous; valid: [kv_heads, n] or nullptr; out: like q.
// Asynchronous on `stream`; throws where the launch fails.
void launch_split_k_decode(const SplitKDecodeArgs& args, ElementType type, const void* q, const void* keys,
                           const void* values, const bool* valid, float* workspace, void* out, cudaStream_t stream);

}  // namespace kvbench::models::cuda
