// Split-K (flash-decoding) attention of one decoding query over a long KV cache. A decoding
// query's GQA attention has one unit of work per KV head (8 on Llama-3-8B) where the card has 132
// SMs: libtorch's fused kernel does not split the keys, and reads the cache at a tenth of the
// card's bandwidth (docs/performance.md). Here every (KV head, split of the keys) is a block: it
// scores its keys for the head's g query heads, and keeps the split's maximum, its sum of
// exponentials and its partial output; a second kernel combines the splits per query head by
// their maxima (the log-sum-exp rescaling). Keys and values are read once, in fp32 arithmetic.
// No libtorch here: models/cuda/split_k_decode.cpp hands over pointers, strides and the stream.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/cuda/split_k_decode_kernel.hpp"

namespace kvbench::models::cuda {
namespace {

constexpr int kThreads = 128;  // 4 warps a block
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

__device__ __forceinline__ float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}
__device__ __forceinline__ float warp_max(float x) {
  for (int offset = 16; offset > 0; offset >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}

// Dynamic shared memory: the head's g queries (scaled) [g][head_dim], then the split's scores
// [g][split]. Partials: max and sum [kv_heads][splits][g], output [kv_heads][splits][g][head_dim].
template <typename T>
__global__ void split_scores_and_partials(SplitKDecodeArgs args, const T* __restrict__ q, const T* __restrict__ keys,
                                          const T* __restrict__ values, const bool* __restrict__ valid,
                                          float* __restrict__ part_max, float* __restrict__ part_sum,
                                          float* __restrict__ part_out) {
  extern __shared__ float shared[];
  const int head = blockIdx.x, split = blockIdx.y;
  const int g = args.group, hd = args.head_dim;
  const int64_t begin = static_cast<int64_t>(split) * args.split_len;
  const int len = static_cast<int>(args.n - begin < args.split_len ? args.n - begin : args.split_len);
  float* q_s = shared;                 // [g][hd]
  float* scores = shared + g * hd;     // [g][split_len]
  __shared__ float reduce[kWarps];

  for (int i = threadIdx.x; i < g * hd; i += kThreads)
    q_s[i] = to_float(q[static_cast<int64_t>(head) * g * hd + i]) * args.scale;
  __syncthreads();

  // Scores: a warp per key, its lanes over head_dim, all g query heads from one read of the key.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const T* head_keys = keys + head * args.key_head_stride;
  for (int j = warp; j < len; j += kWarps) {
    const int64_t slot = begin + j;
    const bool visible = valid == nullptr || valid[head * args.valid_head_stride + slot];
    const T* key = head_keys + slot * args.key_row_stride;
    float dots[kMaxGroup];
    for (int h = 0; h < g; ++h) dots[h] = 0.f;
    for (int d = lane; d < hd; d += 32) {
      const float k = to_float(key[d]);
      for (int h = 0; h < g; ++h) dots[h] += q_s[h * hd + d] * k;
    }
    for (int h = 0; h < g; ++h) {
      const float s = warp_sum(dots[h]);
      if (lane == 0) scores[h * args.split_len + j] = visible ? s : -INFINITY;
    }
  }
  __syncthreads();

  // Per query head: the split's maximum, its exponentials in place, their sum.
  for (int h = 0; h < g; ++h) {
    float* row = scores + h * args.split_len;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < len; j += kThreads) m = fmaxf(m, row[j]);
    m = warp_max(m);
    if (lane == 0) reduce[warp] = m;
    __syncthreads();
    m = reduce[0];
    for (int w = 1; w < kWarps; ++w) m = fmaxf(m, reduce[w]);
    __syncthreads();  // every thread has read reduce[] before it is reused
    float s = 0.f;
    for (int j = threadIdx.x; j < len; j += kThreads) {
      const float p = m == -INFINITY ? 0.f : expf(row[j] - m);  // a split with no visible key adds nothing
      row[j] = p;
      s += p;
    }
    s = warp_sum(s);
    if (lane == 0) reduce[warp] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
      float total = 0.f;
      for (int w = 0; w < kWarps; ++w) total += reduce[w];
      const int64_t at = (static_cast<int64_t>(head) * args.splits + split) * g + h;
      part_max[at] = m;
      part_sum[at] = total;
    }
    __syncthreads();
  }

  // Partial outputs: threads over head_dim, each value row read once for the g query heads.
  const T* head_values = values + head * args.value_head_stride;
  for (int d = threadIdx.x; d < hd; d += kThreads) {
    float acc[kMaxGroup];
    for (int h = 0; h < g; ++h) acc[h] = 0.f;
    for (int j = 0; j < len; ++j) {
      const float v = to_float(head_values[(begin + j) * args.value_row_stride + d]);
      for (int h = 0; h < g; ++h) acc[h] += scores[h * args.split_len + j] * v;
    }
    for (int h = 0; h < g; ++h)
      part_out[((static_cast<int64_t>(head) * args.splits + split) * g + h) * hd + d] = acc[h];
  }
}

// One block per query head (KV head × g), threads over head_dim: the splits rescaled to the
// largest maximum and normalised by the total sum.
template <typename T>
__global__ void combine_splits(SplitKDecodeArgs args, const float* __restrict__ part_max,
                               const float* __restrict__ part_sum, const float* __restrict__ part_out,
                               T* __restrict__ out) {
  const int query_head = blockIdx.x, head = query_head / args.group, h = query_head % args.group;
  const int g = args.group, hd = args.head_dim;
  auto at = [&](int split) { return (static_cast<int64_t>(head) * args.splits + split) * g + h; };
  float m = -INFINITY;
  for (int s = 0; s < args.splits; ++s) m = fmaxf(m, part_max[at(s)]);
  float total = 0.f;
  for (int s = 0; s < args.splits; ++s)
    if (part_max[at(s)] != -INFINITY) total += part_sum[at(s)] * expf(part_max[at(s)] - m);
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.f;
    for (int s = 0; s < args.splits; ++s)
      if (part_max[at(s)] != -INFINITY) acc += part_out[at(s) * hd + d] * expf(part_max[at(s)] - m);
    out[static_cast<int64_t>(query_head) * hd + d] = from_float<T>(acc / total);
  }
}

template <typename T>
void launch_typed(const SplitKDecodeArgs& args, const void* q, const void* keys, const void* values, const bool* valid,
                  float* workspace, void* out, cudaStream_t stream) {
  const int64_t partials = static_cast<int64_t>(args.kv_heads) * args.splits * args.group;
  float* part_max = workspace;
  float* part_sum = workspace + partials;
  float* part_out = workspace + 2 * partials;
  const size_t shared_bytes = split_k_shared_bytes(args);  // at most 48 KiB (plan_splits)
  split_scores_and_partials<T><<<dim3(args.kv_heads, args.splits), kThreads, shared_bytes, stream>>>(
      args, static_cast<const T*>(q), static_cast<const T*>(keys), static_cast<const T*>(values), valid, part_max,
      part_sum, part_out);
  combine_splits<T><<<args.kv_heads * args.group, args.head_dim < kThreads ? args.head_dim : kThreads, 0, stream>>>(
      args, part_max, part_sum, part_out, static_cast<T*>(out));
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("split-K decode attention: kernel launch failed: ") + cudaGetErrorString(status));
}

}  // namespace

void plan_splits(SplitKDecodeArgs& args, int multiprocessors) {
  constexpr int64_t kAlign = 32, kMaxSharedFloats = 48 * 1024 / sizeof(float);
  const int64_t per_head = std::max<int64_t>(1, (4 * static_cast<int64_t>(multiprocessors) + args.kv_heads - 1) / args.kv_heads);
  int64_t len = (args.n + per_head - 1) / per_head;
  len = std::max<int64_t>(kAlign, (len + kAlign - 1) / kAlign * kAlign);
  const int64_t longest = (kMaxSharedFloats - static_cast<int64_t>(args.group) * args.head_dim) / args.group / kAlign * kAlign;
  args.split_len = std::min(len, std::max<int64_t>(kAlign, longest));
  args.splits = static_cast<int>((args.n + args.split_len - 1) / args.split_len);
}

size_t split_k_shared_bytes(const SplitKDecodeArgs& args) {
  return sizeof(float) * (static_cast<size_t>(args.group) * args.head_dim +
                          static_cast<size_t>(args.group) * static_cast<size_t>(args.split_len));
}

void launch_split_k_decode(const SplitKDecodeArgs& args, ElementType type, const void* q, const void* keys,
                           const void* values, const bool* valid, float* workspace, void* out, cudaStream_t stream) {
  switch (type) {
    case ElementType::kFloat32: return launch_typed<float>(args, q, keys, values, valid, workspace, out, stream);
    case ElementType::kFloat16: return launch_typed<__half>(args, q, keys, values, valid, workspace, out, stream);
    case ElementType::kBFloat16: return launch_typed<__nv_bfloat16>(args, q, keys, values, valid, workspace, out, stream);
  }
  throw std::invalid_argument("split-K decode attention: unknown element type");
}

}  // namespace kvbench::models::cuda
