#pragma once
// Native loops for small float32 tensors on the CPU, where libtorch's per-operator dispatch
// (~0.5 µs an op) costs more than the arithmetic: a tiny model's decode step is hundreds of ops
// over vectors of a few dozen floats. Elementwise kernels do the float operations of the tensor
// ops they replace, in the same order, so their results are bit-identical (this file is compiled
// with -ffp-contract=off: no fused multiply-add may round differently); reductions state their
// order.
#include <torch/torch.h>

namespace kvbench::models::cpu {

// A contiguous float32 CPU tensor (what the kernels below take).
bool plain_f32(const torch::Tensor& t);

// RMSNorm of one row x [.., n] (a single row of n): x · (1 / sqrt(Σx²/n + eps)) · weight, the sum
// of squares accumulated in order from the first element (as llama2.c's rmsnorm). x and weight
// plain_f32.
torch::Tensor rms_norm_row(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// Rope::rotate: x·cos + partner(x)·sin along the last dim d, partner = the other element of each
// rotated pair ((b, a) of the halves [a | b], or the swapped neighbours when `interleaved`).
// x [A, B, d] float32 CPU (any strides); cos and sin are the tables [positions, d] (plain_f32),
// read at row first + a (position_dim 0) or first + b (position_dim 1).
torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, int64_t first,
                     int position_dim, bool interleaved);

// A decoding query's attention scores, its g heads per KV head grouped: q [kvh·g, 1, d] (any
// strides), K [kvh, n, d] (rows contiguous) → [kvh, g, n] = (q·kᵀ)·scale, each dot product summed
// in order over d.
torch::Tensor grouped_scores(const torch::Tensor& q, const torch::Tensor& K, float scale);

// The matching mix of values: probs [kvh, g, n] (plain_f32), V [kvh, n, d] (rows contiguous) →
// [kvh, g, d] = probs · V, summed in order over n.
torch::Tensor grouped_mix(const torch::Tensor& probs, const torch::Tensor& V);

// True when the two kernels above take this decoding step: one query, float32 CPU tensors with
// contiguous rows, and a product small enough that dispatching bmm costs more than the loop.
bool small_decode(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V);

}  // namespace kvbench::models::cpu
