#pragma once
// BumbleBee's online summary (bumblebee.txt Alg. 2) for one layer, kept across steps so that a
// step costs O(τ·d) instead of O(τ²):
//  - a token that joins the summary takes a row of the member matrix (its unit key; a discarded
//    member's row goes to the next joiner), and the row travels with its slot (per-slot state
//    "bb_row"), so evictions and moved slots copy nothing;
//  - the joiner's ReLU-cosine similarities with every member come from one product with the
//    member matrix and are stored by row; tokens in the recent window are never compared (they
//    join later, against the members of that time), so memory is O(k²) for a summary of k;
//  - every member remembers its nearest other member, so f_FL's conditional gain
//    sim(i,i) − max_{j≠i} sim(i,j) is read, not recomputed; a discard recomputes only the members
//    whose nearest it was.
// Each discard is still the member of least conditional gain g(k_i | S' \ k_i) over the whole
// summary, ties to the oldest: the same choices as recomputing everything at every step.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "policies/layer_cache.hpp"
#include "policies/submodular.hpp"

namespace kvbench::policies {

class OnlineSummary {
 public:
  OnlineSummary(double lambda, submodular::Concave phi) : lambda_(lambda), phi_(phi) {}

  // The summary S' = every head's tokens outside its newest `window` (the old summary plus the
  // tokens that just left the window); discards members until `k` remain and returns the slots to
  // evict, [kv_heads, e] (e is the same on every head). `acc` [kv_heads, size] float64 on the CPU:
  // the accumulated attention a_i by slot.
  torch::Tensor discard(LayerCache& cache, const torch::Tensor& acc, int64_t window, int64_t k);

 private:
  // One KV head's summary; everything is indexed by member-matrix row.
  struct Head {
    int64_t rows = 0;                 // rows handed out so far
    std::vector<int64_t> free_rows;   // of discarded members, handed out again
    int64_t members = 0;
    std::vector<char> taken;          // by row: holds a member or a token about to join
    std::vector<char> member;         // by row: in the summary
    std::vector<double> nearest;      // by row: max(0, max similarity to another member)
    std::vector<int64_t> nearest_row; // by row: that member, -1 for none
  };

  // The summary of head h starts afresh: no member, every row free.
  void forget(Head& head) const;
  // Rows for the tokens at `slots` (about to join), their unit keys in those rows, and their
  // similarities with every taken row: one product per head.
  std::vector<int64_t> place(int64_t h, const torch::Tensor& keys, const std::vector<int64_t>& slots);
  void reserve(int64_t rows, int64_t head_dim);
  // A member joins: its nearest member, and it may become its members' nearest.
  void join(Head& head, const double* sim, int64_t y, const std::vector<int64_t>& summary) const;
  // max(0, max_{j ∈ summary, member, j ≠ i} sim(i, j)) and its argmax.
  void find_nearest(Head& head, const double* sim, int64_t i, const std::vector<int64_t>& summary) const;

  double lambda_;
  submodular::Concave phi_;
  int64_t capacity_ = 0;  // rows per head the buffers hold
  torch::Tensor sim_;     // [kv_heads, capacity, capacity] float64, by row; read for members only
  torch::Tensor unit_;    // [kv_heads, capacity, head_dim] float64: the member matrix
  std::vector<Head> heads_;
};

}  // namespace kvbench::policies
