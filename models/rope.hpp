#pragma once
// Rotary position embeddings, in both conventions and with the rope_scaling variants of HF configs.
#include <torch/torch.h>

#include "models/model_config.hpp"

namespace kvbench::models {

class Rope {
 public:
  explicit Rope(const ModelConfig& config);

  // Rotates x [heads, T, head_dim] where token t sits at positions[t] (int64 [T]).
  torch::Tensor apply(const torch::Tensor& x, const torch::Tensor& positions) const;

 private:
  torch::Tensor inverse_frequencies(int64_t seq_len) const;

  ModelConfig config_;
  torch::Tensor base_inv_freq_;  // [head_dim/2] float64, after static scaling (linear, llama3)
};

}  // namespace kvbench::models
