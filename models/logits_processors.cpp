#include "models/logits_processors.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kvbench::models {

namespace {
constexpr double kFiltered = -std::numeric_limits<double>::infinity();
constexpr int64_t kMinTokensToKeep = 1;  // transformers: 2 with beam search, which kvbench does not run

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("sampling: " + what);
}
}  // namespace

void SamplingSettings::check() const {
  // Written so that NaN fails too (every comparison with NaN is false).
  require(temperature >= 0 && std::isfinite(temperature), "temperature must be a finite number >= 0 (0: greedy)");
  require(top_k >= 0, "top_k must be >= 0 (0: off)");
  require(top_p >= 0 && top_p <= 1, "top_p must be in [0, 1]");
  require(min_p >= 0 && min_p <= 1, "min_p must be in [0, 1]");
  require(repetition_penalty > 0 && std::isfinite(repetition_penalty), "repetition_penalty must be a finite number > 0");
}

nlohmann::json SamplingSettings::to_json() const {
  return {{"decoding", greedy() ? "greedy" : "sampling"}, {"temperature", temperature}, {"top_k", top_k},
          {"top_p", top_p}, {"min_p", min_p}, {"repetition_penalty", repetition_penalty}};
}

// RepetitionPenaltyLogitsProcessor: the score of every id seen (once, however often it repeats)
// is divided by the penalty when positive and multiplied by it when negative.
torch::Tensor apply_repetition_penalty(const torch::Tensor& scores, const std::vector<int64_t>& ids, double penalty) {
  if (ids.empty()) return scores;
  const torch::Tensor index = torch::tensor(ids, torch::kLong).to(scores.device());
  const torch::Tensor seen = scores.gather(0, index);
  return scores.scatter(0, index, torch::where(seen < 0, seen * penalty, seen / penalty));
}

// TopKLogitsWarper: every score below the k-th largest is filtered; ties with it stay.
torch::Tensor apply_top_k(const torch::Tensor& scores, int64_t top_k) {
  const int64_t k = std::min(std::max(top_k, kMinTokensToKeep), scores.size(0));
  const torch::Tensor kth = std::get<0>(scores.topk(k)).index({k - 1});
  return scores.masked_fill(scores < kth, kFiltered);
}

// TopPLogitsWarper: sorted ascending, the tokens whose cumulative probability is <= 1 - top_p are
// filtered, the last min_tokens_to_keep always kept. transformers' sort is not stable; among equal
// scores on the boundary this stable one keeps the higher ids (docs/sampling.md).
torch::Tensor apply_top_p(const torch::Tensor& scores, double top_p) {
  auto [sorted, order] = scores.sort(/*stable=*/true, 0, /*descending=*/false);
  torch::Tensor remove = sorted.softmax(0).cumsum(0) <= (1 - top_p);
  remove.slice(0, scores.size(0) - kMinTokensToKeep).fill_(false);
  return scores.masked_fill(remove.scatter(0, order, remove), kFiltered);
}

// MinPLogitsWarper: tokens whose probability is below min_p times the top probability are
// filtered (the top token never is, so min_tokens_to_keep = 1 changes nothing).
torch::Tensor apply_min_p(const torch::Tensor& scores, double min_p) {
  const torch::Tensor probs = scores.softmax(0);
  return scores.masked_fill(probs < probs.max() * min_p, kFiltered);
}

torch::Tensor process_logits(const torch::Tensor& scores, const std::vector<int64_t>& ids, const SamplingSettings& s) {
  torch::Tensor out = scores.to(torch::kFloat32);
  if (s.repetition_penalty != 1) out = apply_repetition_penalty(out, ids, s.repetition_penalty);
  if (s.greedy()) return out;
  if (s.temperature != 1) out = out / s.temperature;
  if (s.top_k != 0) out = apply_top_k(out, s.top_k);
  if (s.top_p < 1) out = apply_top_p(out, s.top_p);
  if (s.min_p > 0) out = apply_min_p(out, s.min_p);
  return out;
}

}  // namespace kvbench::models
