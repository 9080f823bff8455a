#pragma once
// Next-token choice as transformers' generate() makes it: greedy (argmax, the first on ties) at
// temperature 0, else its logits processors (models/logits_processors.hpp), softmax and one
// torch.multinomial draw from a CPU generator seeded with `seed` — the draws Python's
// torch.manual_seed(seed) gives with the same libtorch version.
#include <ATen/core/Generator.h>
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "models/logits_processors.hpp"

namespace kvbench::models {

class Sampler {
 public:
  Sampler(const SamplingSettings& settings, uint64_t seed);
  // logits [vocab]; ids: the prompt and the tokens generated so far (the repetition penalty's).
  int64_t next(const torch::Tensor& logits, const std::vector<int64_t>& ids);

 private:
  SamplingSettings settings_;
  at::Generator generator_;
};

}  // namespace kvbench::models
