#include "models/sampler.hpp"

#include <ATen/CPUGeneratorImpl.h>

namespace kvbench::models {

Sampler::Sampler(const SamplingSettings& settings, uint64_t seed)
    : settings_(settings), generator_(at::detail::createCPUGenerator(seed)) {
  settings_.check();
}

int64_t Sampler::next(const torch::Tensor& logits, const std::vector<int64_t>& ids) {
  const torch::Tensor row = logits.reshape({-1});
  if (settings_.greedy() && settings_.repetition_penalty == 1) return row.argmax().item<int64_t>();  // the raw logits: greedy as before
  const torch::Tensor scores = process_logits(row.to(torch::kCPU), ids, settings_);
  if (settings_.greedy()) return scores.argmax().item<int64_t>();
  // transformers: probs = softmax(scores) of the [batch, vocab] row, torch.multinomial(probs, 1).
  const torch::Tensor probs = scores.softmax(0).unsqueeze(0);
  return torch::multinomial(probs, 1, /*replacement=*/false, generator_).item<int64_t>();
}

}  // namespace kvbench::models
