// use_cpu_threads gives the BLAS products the threads and libtorch's elementwise pool one, so the
// two pools never spin against each other (models/cpu_threads.hpp).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/cpu_threads.hpp"

namespace kvbench::models {
namespace {

TEST(CpuThreads, ProductsGetTheThreadsElementwiseOpsOne) {
  const int intra_before = at::get_num_threads(), blas_before = blas_threads();
  use_cpu_threads(3);
  EXPECT_EQ(at::get_num_threads(), 1);
  if (blas_before > 0) EXPECT_EQ(blas_threads(), 3) << "OpenBLAS is loaded but kept its thread count";
  use_cpu_threads(0);  // leaves both as they are
  EXPECT_EQ(at::get_num_threads(), 1);
  if (blas_before > 0) EXPECT_EQ(blas_threads(), 3);
  at::set_num_threads(intra_before);
  if (blas_before > 0) use_cpu_threads(blas_before);
  at::set_num_threads(intra_before);
}

}  // namespace
}  // namespace kvbench::models
