#pragma once
// The CPU float32 projection of decoding rows, summed in one fixed order whatever the number of
// rows: a row's result has the same bits alone (one sequence's decode step) as among other
// sessions' rows (the batched step of models/decode_batch.hpp), which a BLAS GEMV and GEMM do not
// give (they block and sum differently). The order, for each output element: eight partial sums
// (input element i into sum i mod 8) over the largest multiple of 8, the sums added in a fixed tree
// ((0+4)+(2+6)) + ((1+5)+(3+7)), then the remaining elements in order, then the base added. The file
// is compiled with -ffp-contract=off (no fused multiply-add), so its AVX2 and baseline x86-64 builds
// give the same bits. One row reads each weight once, as a GEMV: as fast as OpenBLAS's single-thread
// GEMV on this VM's decode step (docs/performance.md).
#include <torch/torch.h>

namespace kvbench::models::cpu {

// x [rows, in] and w [out, in], float32 CPU with contiguous rows; `base` undefined, a bias [out]
// (added to every row) or a residual [rows, out] (contiguous rows) → [rows, out] = base + x · wᵀ.
// Output rows are split over `threads` threads (each element computed by one: the same bits).
torch::Tensor fixed_order_project(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& base, int threads = 1);

}  // namespace kvbench::models::cpu
