#pragma once
// Rotary position embeddings, in both conventions and with the rope_scaling variants of HF configs.
#include <torch/torch.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "models/model_config.hpp"

namespace kvbench::models {

class Rope {
 public:
  explicit Rope(const ModelConfig& config);

  // Rotates x [heads, T, head_dim] where token t sits at positions[t] (int64 [T]). Dynamic NTK
  // scales by the sequence length `seq_len` = the largest position + 1 (read from `positions`
  // when not given, which makes a device wait).
  torch::Tensor apply(const torch::Tensor& x, const torch::Tensor& positions, int64_t seq_len = -1) const;

  // The same rotation from a cos/sin table kept on x's device (no per-call host work or copies):
  // x [T, heads, head_dim] (token-major) at positions first..first+T-1,
  torch::Tensor apply_tokens(const torch::Tensor& x, int64_t first) const;
  // x [heads, n, head_dim] at positions first..first+n-1,
  torch::Tensor apply_heads(const torch::Tensor& x, int64_t first) const;
  // x [heads, n, head_dim] at positions[j] (int64 [n] on x's device), every one below `bound`
  // (dynamic NTK takes `bound` as the sequence length: the caller passes the ranks 0..bound−1).
  torch::Tensor apply_heads_at(const torch::Tensor& x, const torch::Tensor& positions, int64_t bound) const;

  // cos and signed sin [length, head_dim] for positions 0..length-1 (length ≥ `bound`), laid out
  // so that rotate(x) = x·cos + partner(x)·sin for both rope styles; kept and shared, replaced by
  // a longer one when a larger bound is asked (a holder of the old one keeps it alive).
  using Table = std::pair<torch::Tensor, torch::Tensor>;
  Table table(torch::Device device, int64_t bound) const;
  // False for dynamic NTK, which rescales every frequency with the sequence length.
  bool has_table() const;
  // x [T, heads, head_dim] (token-major) at positions (int64 [T] on x's device) read from `table`:
  // no host work, no allocation outside the device, what a captured CUDA graph can replay
  // (models/captured_pieces.hpp). The same values as apply_tokens.
  torch::Tensor apply_tokens_at(const torch::Tensor& x, const torch::Tensor& positions, const Table& table) const;

 private:
  torch::Tensor inverse_frequencies(int64_t seq_len) const;
  torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) const;

  struct Tables {
    std::mutex mutex;
    std::map<std::string, std::pair<torch::Tensor, torch::Tensor>> by_device;
  };

  ModelConfig config_;
  torch::Tensor base_inv_freq_;  // [head_dim/2] float64, after static scaling (linear, llama3)
  std::shared_ptr<Tables> tables_ = std::make_shared<Tables>();
};

}  // namespace kvbench::models
