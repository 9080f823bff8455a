#include "models/cpu_threads.hpp"

#include <dlfcn.h>
#include <torch/torch.h>

#include <algorithm>

namespace kvbench::models {
namespace {

// Looked up at run time: libtorch may be linked with another BLAS, and kvbench does not link
// OpenBLAS itself.
template <typename Fn>
Fn openblas_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

void use_cpu_threads(int threads) {
  if (threads < 1) return;
  at::set_num_threads(1);
  if (auto set = openblas_symbol<void (*)(int)>("openblas_set_num_threads")) set(threads);
}

int default_cpu_threads() {
  static const int threads = std::max(1, at::get_num_threads());
  return threads;
}

int blas_threads() {
  static const auto get = openblas_symbol<int (*)()>("openblas_get_num_threads");  // asked per decode projection
  return get ? get() : 0;
}

}  // namespace kvbench::models
