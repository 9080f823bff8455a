#pragma once
// Next-token choice: greedy at temperature 0, else temperature + nucleus (top-p) sampling from a
// seeded generator whose draws do not depend on the platform's <random> distributions.
#include <torch/torch.h>

#include <cstdint>
#include <random>

namespace kvbench::models {

class Sampler {
 public:
  Sampler(double temperature, double top_p, uint64_t seed);
  int64_t next(const torch::Tensor& logits);  // logits [vocab]

 private:
  double uniform();  // [0, 1) from the top 53 bits

  double temperature_;
  double top_p_;
  std::mt19937_64 rng_;
};

}  // namespace kvbench::models
