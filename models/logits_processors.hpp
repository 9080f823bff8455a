#pragma once
// The logits processors of Hugging Face transformers' generate() (generation/logits_process.py),
// applied in the order its _get_logits_processor appends them: the repetition penalty (a
// processor, so greedy decoding reads it too), then, when sampling, temperature, top-k, top-p and
// min-p. Scores are float32, as transformers casts each step's logits; a filtered token's score is
// -inf. Each filter keeps at least one token (min_tokens_to_keep = 1 without beam search).
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace kvbench::models {

struct SamplingSettings {
  double temperature = 0;         // 0: greedy (do_sample=False); else sample at this temperature
  int64_t top_k = 0;              // 0: off (transformers' GenerationConfig defaults to 50; tasks say theirs)
  double top_p = 1.0;             // 1: off
  double min_p = 0;               // 0: off
  double repetition_penalty = 1;  // 1: off; > 1 lowers the scores of ids in the prompt or the output

  bool greedy() const { return temperature == 0; }
  // Throws std::invalid_argument naming the field (transformers' ranges; NaN fails every one).
  void check() const;
  nlohmann::json to_json() const;
};

// Each processor on one step's scores [vocab] (float32). `ids`: the prompt and the tokens
// generated so far, as transformers' input_ids.
torch::Tensor apply_repetition_penalty(const torch::Tensor& scores, const std::vector<int64_t>& ids, double penalty);
torch::Tensor apply_top_k(const torch::Tensor& scores, int64_t top_k);
torch::Tensor apply_top_p(const torch::Tensor& scores, double top_p);
torch::Tensor apply_min_p(const torch::Tensor& scores, double min_p);

// The chain transformers builds for these settings (greedy: the repetition penalty only).
torch::Tensor process_logits(const torch::Tensor& scores, const std::vector<int64_t>& ids, const SamplingSettings& settings);

}  // namespace kvbench::models
