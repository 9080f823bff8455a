#pragma once
// BumbleBee's online summary (bumblebee.txt Alg. 2) for one layer, kept across steps so that a
// step costs O(τ·d) instead of O(τ²):
//  - the ReLU-cosine similarities of the cached keys are stored by token id, an id that travels
//    with its slot (per-slot state "bb_id"), so evictions and moved slots copy nothing; a new
//    token adds one row and column;
//  - every summary member remembers its nearest other member, so f_FL's conditional gain
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
  struct Head {
    std::vector<int64_t> free_ids;  // ids of discarded tokens, handed out again
    int64_t next_id = 0;
    int64_t members = 0;
    std::vector<char> member;        // by id: in the summary
    std::vector<double> nearest;     // by id: max(0, max similarity to another member)
    std::vector<int64_t> nearest_id; // by id: that member, -1 for none
  };

  // Every slot gets a fresh id (slot h,j → j) and the similarities of all cached keys.
  void rebuild(LayerCache& cache);
  // Ids and similarities for slots that have none yet (the tokens appended since the last step).
  void add_new_tokens(LayerCache& cache);
  void reserve(int64_t ids, int64_t head_dim);
  // A member joins: its nearest member, and it may become its members' nearest.
  void join(Head& head, const double* sim, int64_t y, const std::vector<int64_t>& summary) const;
  // max(0, max_{j ∈ summary, member, j ≠ i} sim(i, j)) and its argmax.
  void find_nearest(Head& head, const double* sim, int64_t i, const std::vector<int64_t>& summary) const;

  double lambda_;
  submodular::Concave phi_;
  int64_t capacity_ = 0;  // ids per head the buffers hold
  torch::Tensor sim_;     // [kv_heads, capacity, capacity] float64, by id
  torch::Tensor unit_;    // [kv_heads, capacity, head_dim] float64 unit keys, by id
  std::vector<Head> heads_;
};

}  // namespace kvbench::policies
