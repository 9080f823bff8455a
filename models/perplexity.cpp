#include "models/perplexity.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace kvbench::models {

PerplexityResult evaluate_perplexity(InferenceSession& session, const std::vector<int64_t>& tokens) {
  if (tokens.size() < 2) throw std::invalid_argument("perplexity needs at least one token after BOS");
  auto t0 = std::chrono::steady_clock::now();
  // The last token is only a target, never an input.
  std::vector<int64_t> inputs(tokens.begin(), tokens.end() - 1);
  torch::Tensor logits = session.prefill(inputs, /*all_logits=*/true);  // [n-1, vocab]
  torch::Tensor targets = torch::tensor(std::vector<int64_t>(tokens.begin() + 1, tokens.end()), torch::kInt64);
  torch::Tensor host = logits.to(torch::kCPU, torch::kFloat64);
  require_finite_logits(session.model(), host);  // a NaN perplexity is not a result
  torch::Tensor logp = torch::log_softmax(host, -1);
  torch::Tensor nll = -logp.gather(1, targets.unsqueeze(1)).squeeze(1);
  PerplexityResult result;
  result.nll.assign(nll.data_ptr<double>(), nll.data_ptr<double>() + nll.numel());
  double sum = 0;
  for (double v : result.nll) sum += v;  // sequential sum: the same order on every run
  result.mean_nll = sum / static_cast<double>(result.nll.size());
  result.perplexity = std::exp(result.mean_nll);
  result.max_cache_len = session.max_cache_len();
  result.peak_logical_bytes = session.peak_logical_bytes();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace kvbench::models
