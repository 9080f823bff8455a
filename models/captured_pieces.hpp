#pragma once
// A sequence of pieces of work, each a function of tensors that stay where they are, captured as
// CUDA graphs on a CUDA device: a replay launches a piece's kernels from one host call instead of
// one host call (and libtorch's dispatch) each. A decoding step of an 8B model is ~1,000 small
// kernels whose host cost exceeds their device time; the pieces between the attentions
// (Transformer's decoding step, models/transformer.cpp) are where nothing changes shape from one
// step to the next. Elsewhere (the CPU, or a build without libtorch's CUDA graphs) each run()
// calls the piece itself: the same work, the same results, no capture.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

namespace kvbench::models {

class CapturedPieces {
 public:
  // A piece reads its inputs through references it holds (tensors whose storage and shape do not
  // change between runs: buffers written in place, other pieces' outputs) and returns its outputs.
  // Captured, it must not read host memory, synchronise, or allocate outside the device.
  using Piece = std::function<std::vector<torch::Tensor>()>;

  explicit CapturedPieces(torch::Device device);
  ~CapturedPieces();
  CapturedPieces(const CapturedPieces&) = delete;
  CapturedPieces& operator=(const CapturedPieces&) = delete;

  // Whether pieces on `device` are captured as graphs in this build.
  static bool captures(torch::Device device);

  // Appends a piece. Where it is captured: called once on a side stream (cuBLAS's handle and
  // workspace, the allocator's blocks), then captured there; its outputs are the captured
  // tensors, which every replay rewrites. Pieces share one memory pool, so add them in the order
  // they run.
  void add(Piece piece);
  // Runs piece i on the current stream (replays its graph, or calls it) and returns its outputs,
  // valid until its next run.
  const std::vector<torch::Tensor>& run(size_t i);
  const std::vector<torch::Tensor>& outputs(size_t i) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvbench::models
