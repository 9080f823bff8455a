#pragma once
// Measures, along an evicting session's own trajectory, how far its attention is from what the
// full cache would give. A shadow full cache per layer receives the same keys/values the policy's
// cache receives; every layer's queries are replayed on it.
//  - attention-output error (BUZZ eq. 4): ‖Ô − O‖₂ / ‖O‖₂ per layer and step, Ô from the
//    evicted cache, O from the shadow;
//  - Jaccard (RoCo Fig. 2): per layer, KV head and step, the kept set (the policy's cache when the
//    query arrives) against the top-B positions of the full attention of that query (B = the
//    policy's cache size at that moment, so a perfect policy scores 1).
#include <torch/torch.h>

#include <vector>

#include "models/transformer.hpp"

namespace kvbench::models {

class FidelityProbe {
 public:
  explicit FidelityProbe(const Transformer& model, policies::PositionMode mode);

  // The hooks to install with InferenceSession::set_inspector.
  CacheControl control();

  double mean_attention_error() const;  // over layers and steps
  double mean_jaccard() const;          // over layers, heads and steps
  std::vector<double> attention_error_per_layer() const;
  int64_t steps() const { return steps_; }

 private:
  const Transformer& model_;
  policies::KVCache shadow_;
  std::vector<double> error_sum_;
  std::vector<int64_t> error_count_;
  double jaccard_sum_ = 0;
  int64_t jaccard_count_ = 0;
  int64_t steps_ = 0;
  std::vector<torch::Tensor> kept_positions_;  // per layer, the policy's positions before this forward
};

// K-VEC's coverage (Tables 6–7): the fraction of prompt positions [0, prompt_len) kept by at least
// one head of at least one layer.
double union_coverage(const policies::KVCache& cache, int64_t prompt_len);

}  // namespace kvbench::models
