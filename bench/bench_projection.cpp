// The projections of one decoding step of the 110M llama2.c shape (12 layers: q/k/v 2304×768,
// output 768×768, gate/up 4096×768, down 768×2048; LM head 32000×768; 440 MB of float32 weights,
// read from memory as in a real step), for `rows` sequences: kvbench's fixed-order kernel (all
// rows in one call, as a ring's batched step) against OpenBLAS's GEMV (one call per row, as each
// sequence's own step did before). docs/performance.md has the numbers.
// Run: OPENBLAS_NUM_THREADS=1 build/bench/bench_projection
#include <benchmark/benchmark.h>

#include <vector>

#include "models/fixed_order_projection.hpp"

namespace {

const std::vector<torch::Tensor>& step_weights() {
  static const std::vector<torch::Tensor> weights = [] {
    std::vector<torch::Tensor> w;
    for (int layer = 0; layer < 12; ++layer)
      for (const auto& shape : std::vector<std::vector<int64_t>>{{2304, 768}, {768, 768}, {4096, 768}, {768, 2048}})
        w.push_back(torch::randn(shape));
    w.push_back(torch::randn({32000, 768}));
    return w;
  }();
  return weights;
}

void StepProjections(benchmark::State& state, bool fixed_order) {
  const int64_t rows = state.range(0);
  const auto& weights = step_weights();
  const torch::Tensor x = torch::randn({rows, 2048});
  for (auto _ : state) {
    if (fixed_order) {
      for (const torch::Tensor& w : weights)
        benchmark::DoNotOptimize(kvbench::models::cpu::fixed_order_project(x.narrow(1, 0, w.size(1)), w, {}));
    } else {  // each sequence's step in turn, every weight read again
      for (int64_t r = 0; r < rows; ++r)
        for (const torch::Tensor& w : weights) benchmark::DoNotOptimize(torch::mv(w, x[r].narrow(0, 0, w.size(1))));
    }
  }
  state.SetItemsProcessed(state.iterations() * rows);  // rows/s: sequences' steps per second
}

BENCHMARK_CAPTURE(StepProjections, fixed_order, true)->Arg(1)->Arg(8)->Arg(60)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(StepProjections, blas_gemv, false)->Arg(1)->Arg(8)->Arg(60)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
