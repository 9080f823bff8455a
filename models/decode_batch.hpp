#pragma once
// The decoding steps of a ring's sessions (harness/prefill_sharing.hpp) with each projection run
// once for all of them. The sessions' threads take turns: a session that reaches a one-row
// projection leaves its row and passes the turn. When the turn comes back to it and the row is
// still pending, every other session has had its turn since, so it runs the projection for every
// row pending on the same weights — reading the weights once for all, where each session's own
// step reads them all from memory. fixed_order_project gives each row the bits it gives that row
// alone, so every session's result is its own step's, bit for bit. The rest of a step (norms, RoPE,
// attention, the policy, sampling) each session does on its own turn.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace kvbench::models {

// One-row projections this thread's sessions ran (the CPU float32 decode steps), and those of them
// computed in one call with other sessions' rows.
struct DecodeRows {
  int64_t projected = 0;
  int64_t batched = 0;
};
DecodeRows& decode_rows_of_this_thread();

class DecodeBatch {
 public:
  // `yield` hands the turn to the next thread and returns when this thread's turn comes back.
  explicit DecodeBatch(std::function<void()> yield) : yield_(std::move(yield)) {}

  // The batch this thread's sessions project through (null: none).
  static DecodeBatch* current();
  class Scope {  // makes `batch` the current one of this thread while it lives
   public:
    explicit Scope(DecodeBatch* batch);
    ~Scope();
  };

  // base + x · wᵀ for one row x [1, in] (base as cpu::fixed_order_project takes it), computed with
  // the rows other sessions leave on the same weights and base kind before the turn comes back.
  torch::Tensor project(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& base, int threads);

  // True while a session waits in project(): it is mid-step (asked by a session outside one).
  bool sessions_mid_step() const { return in_projection_ > 0; }

 private:
  struct Row;
  void run_group(Row& mine);

  std::function<void()> yield_;
  std::vector<Row*> pending_;  // rows not yet computed; touched only by the thread holding the turn
  int64_t in_projection_ = 0;  // sessions inside project(), computed or not
};

}  // namespace kvbench::models
