#include "models/captured_pieces.hpp"

#ifdef KVBENCH_CUDA_GRAPHS
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace kvbench::models {

struct CapturedPieces::Impl {
  struct Entry {
    Piece piece;
    std::vector<torch::Tensor> outputs;
#ifdef KVBENCH_CUDA_GRAPHS
    std::unique_ptr<at::cuda::CUDAGraph> graph;
#endif
  };
  explicit Impl(torch::Device d) : device(d), capture(CapturedPieces::captures(d)) {}
  torch::Device device;
  bool capture;
  std::vector<Entry> entries;
#ifdef KVBENCH_CUDA_GRAPHS
  decltype(at::cuda::graph_pool_handle()) pool{0, 0};  // its type moved between libtorch versions
#endif

  // Captures e on a side stream that first waits for the current stream's work (the inputs'
  // writes), which waits in turn for the capture's warm-up.
  void capture_entry(Entry& e) {
#ifdef KVBENCH_CUDA_GRAPHS
    // A device without an index (plain "cuda") is the current one.
    const c10::cuda::CUDAGuard device_guard(device.has_index() ? device.index() : c10::cuda::current_device());
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream();
    const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
    at::cuda::CUDAEvent inputs_written;
    inputs_written.record(current);
    inputs_written.block(side);
    {
      const c10::cuda::CUDAStreamGuard stream_guard(side);
      e.piece();  // warm-up outside the capture: lazy initialisation must not be captured
      if (pool.first == 0 && pool.second == 0) pool = at::cuda::graph_pool_handle();
      e.graph = std::make_unique<at::cuda::CUDAGraph>();
      e.graph->capture_begin(pool);
      e.outputs = e.piece();
      e.graph->capture_end();
    }
    at::cuda::CUDAEvent captured;
    captured.record(side);
    captured.block(current);
#else
    (void)e;
#endif
  }
};

CapturedPieces::CapturedPieces(torch::Device device) : impl_(std::make_unique<Impl>(device)) {}
CapturedPieces::~CapturedPieces() = default;

bool CapturedPieces::captures(torch::Device device) {
#ifdef KVBENCH_CUDA_GRAPHS
  return device.is_cuda();
#else
  (void)device;
  return false;
#endif
}

void CapturedPieces::add(Piece piece) {
  impl_->entries.emplace_back();
  impl_->entries.back().piece = std::move(piece);
  if (impl_->capture) impl_->capture_entry(impl_->entries.back());
}

const std::vector<torch::Tensor>& CapturedPieces::run(size_t i) {
  Impl::Entry& e = impl_->entries.at(i);
#ifdef KVBENCH_CUDA_GRAPHS
  if (e.graph) {
    e.graph->replay();
    return e.outputs;
  }
#endif
  e.outputs = e.piece();
  return e.outputs;
}

const std::vector<torch::Tensor>& CapturedPieces::outputs(size_t i) const { return impl_->entries.at(i).outputs; }

}  // namespace kvbench::models
