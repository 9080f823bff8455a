#pragma once
// CPU threads for inference. libtorch's intra-op pool (OpenMP: elementwise ops, softmax) and
// OpenBLAS's own pthread pool (every GEMM and GEMV) are separate pools: sized to the cores
// together, they spin against each other (on 2 cores, 4 busy threads), which made a stories260K
// prefill up to 8× and a 110M decode 3× slower on this machine (docs/performance.md). So the
// threads go to the products, where the work is, and elementwise ops run on the calling thread.

namespace kvbench::models {

// `threads` for BLAS products (OpenBLAS, when it is the BLAS loaded), one for libtorch's
// intra-op pool. threads < 1 leaves both as they are.
void use_cpu_threads(int threads);

// libtorch's own thread count as the process started (OMP_NUM_THREADS, else the physical cores as
// libtorch counts them), remembered at the first call, before use_cpu_threads changes it. Every
// command and the grid's workers derive their BLAS threads from it, so a job gets the same count
// however it is run: a GEMM's sums, and so the last bits of a result, depend on that count.
int default_cpu_threads();

// OpenBLAS's thread count, or 0 when the BLAS loaded is not OpenBLAS. The decode step's own
// projection kernel (models/fixed_order_projection.hpp) takes the same count.
int blas_threads();

}  // namespace kvbench::models
