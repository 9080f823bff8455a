#include "models/fixed_order_projection.hpp"

#include <cstring>
#include <stdexcept>

namespace kvbench::models::cpu {
namespace {

// Eight floats: one ymm register under AVX2, two xmm registers on baseline x86-64 (or NEON's q
// registers), the same per-lane arithmetic either way.
using Lanes = float __attribute__((vector_size(32)));

inline __attribute__((always_inline)) Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// O outputs × R rows: y[r·y_stride + o] = Σ_i w[o·in + i]·x[r·x_stride + i] in the header's order,
// which does not depend on O or R (each (o, r) has its own accumulator).
template <int O, int R>
inline __attribute__((always_inline)) void dots(const float* w, int64_t in, const float* x, int64_t x_stride, float* y,
                                                int64_t y_stride) {
  Lanes acc[O][R] = {};
  int64_t i = 0;
  for (; i + 8 <= in; i += 8) {
    Lanes xv[R];
    for (int r = 0; r < R; ++r) xv[r] = load(x + r * x_stride + i);
    for (int o = 0; o < O; ++o) {
      // One row streams the weights from memory once: fetch ahead of the hardware prefetcher.
      if (R == 1) __builtin_prefetch(w + o * in + i + 1024);
      const Lanes wv = load(w + o * in + i);
      for (int r = 0; r < R; ++r) acc[o][r] += wv * xv[r];
    }
  }
  for (int o = 0; o < O; ++o)
    for (int r = 0; r < R; ++r) {
      const Lanes& s = acc[o][r];
      float sum = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
      for (int64_t j = i; j < in; ++j) sum += w[o * in + j] * x[r * x_stride + j];
      y[r * y_stride + o] = sum;
    }
}

// Outputs [first, last) of every row. Tiles: 8 outputs for one row (8 weight streams); 4 outputs
// × 2 rows for several (each weight vector loaded once for two rows, 8 accumulators in registers).
__attribute__((target_clones("avx2", "default"))) void project_block(const float* w, int64_t in, const float* x,
                                                                      int64_t x_stride, int64_t rows, float* y,
                                                                      int64_t y_stride, int64_t first, int64_t last) {
  int64_t o = first;
  if (rows == 1)
    for (; o + 8 <= last; o += 8) dots<8, 1>(w + o * in, in, x, x_stride, y + o, y_stride);
  for (; o + 4 <= last; o += 4) {
    int64_t r = 0;
    for (; r + 2 <= rows; r += 2) dots<4, 2>(w + o * in, in, x + r * x_stride, x_stride, y + r * y_stride + o, y_stride);
    for (; r < rows; ++r) dots<4, 1>(w + o * in, in, x + r * x_stride, x_stride, y + r * y_stride + o, y_stride);
  }
  for (; o < last; ++o)
    for (int64_t r = 0; r < rows; ++r) dots<1, 1>(w + o * in, in, x + r * x_stride, x_stride, y + r * y_stride + o, y_stride);
}

bool rows_contiguous_f32(const torch::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == torch::kFloat32 && t.dim() == 2 && t.stride(1) == 1;
}

}  // namespace

torch::Tensor fixed_order_project(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& base, int threads) {
  if (!rows_contiguous_f32(x) || !rows_contiguous_f32(w) || w.stride(0) != w.size(1) || x.size(1) != w.size(1))
    throw std::invalid_argument("fixed_order_project: x [rows, in] and w [out, in] must be float32 CPU matrices with contiguous rows, got " +
                                c10::str(x.sizes()) + " and " + c10::str(w.sizes()));
  const int64_t rows = x.size(0), in = w.size(1), out = w.size(0);
  torch::Tensor y = torch::empty({rows, out}, x.options());
  const float* wp = w.data_ptr<float>();
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  // Threads take blocks of outputs; an element's sum does not depend on its block or tile.
  constexpr int64_t kBlock = 32;
  const int64_t blocks = (out + kBlock - 1) / kBlock;
  const bool parallel = threads > 1 && rows * out * in >= (int64_t{1} << 20);
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
  for (int64_t b = 0; b < blocks; ++b)
    project_block(wp, in, xp, x.stride(0), rows, yp, out, b * kBlock, std::min(out, (b + 1) * kBlock));
  if (!base.defined()) return y;
  if (base.dim() == 1 && base.size(0) == out) return y.add_(base);
  if (base.sizes() == y.sizes()) return y.add_(base);
  throw std::invalid_argument("fixed_order_project: base " + c10::str(base.sizes()) + " is neither [" + std::to_string(out) +
                              "] nor [" + std::to_string(rows) + ", " + std::to_string(out) + "]");
}

}  // namespace kvbench::models::cpu
