#include "models/sampler.hpp"

#include <cmath>
#include <stdexcept>

namespace kvbench::models {

Sampler::Sampler(double temperature, double top_p, uint64_t seed) : temperature_(temperature), top_p_(top_p), rng_(seed) {
  // Written so that NaN fails too (every comparison with NaN is false).
  if (!(temperature >= 0 && std::isfinite(temperature))) throw std::invalid_argument("temperature must be a finite number >= 0");
  if (!(top_p > 0 && top_p <= 1)) throw std::invalid_argument("top-p must be in (0, 1]");
}

double Sampler::uniform() { return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0); }

int64_t Sampler::next(const torch::Tensor& logits) {
  torch::Tensor l = logits.to(torch::kCPU, torch::kFloat64).reshape({-1});
  if (temperature_ == 0) return l.argmax().item<int64_t>();
  torch::Tensor probs = torch::softmax(l / temperature_, 0);
  auto sorted = probs.sort(/*stable=*/true, 0, /*descending=*/true);
  torch::Tensor p = std::get<0>(sorted), idx = std::get<1>(sorted);
  auto pa = p.accessor<double, 1>();
  // Nucleus: the smallest prefix whose mass reaches top_p (at least one token).
  int64_t keep = 0;
  double mass = 0;
  while (keep < p.size(0) && (keep == 0 || mass < top_p_)) mass += pa[keep++];
  double r = uniform() * mass, acc = 0;
  for (int64_t i = 0; i < keep; ++i) {
    acc += pa[i];
    if (r < acc) return idx[i].item<int64_t>();
  }
  return idx[keep - 1].item<int64_t>();
}

}  // namespace kvbench::models
