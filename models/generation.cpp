#include "models/generation.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "models/job_clock.hpp"
#include "models/sampler.hpp"

namespace kvbench::models {

GenerationResult generate(InferenceSession& session, const std::vector<int64_t>& prompt, const GenerationOptions& options) {
  using clock = JobClock;
  GenerationResult result;
  Sampler sampler(options.sampling, options.seed);
  std::vector<int64_t> ids = options.sampling.repetition_penalty != 1 ? prompt : std::vector<int64_t>{};  // what the penalty reads
  auto t0 = clock::now();
  torch::Tensor logits = session.prefill(prompt).squeeze(0);
  result.cache_lengths.push_back(session.cache_len());
  auto t1 = clock::now();
  result.prefill_seconds = std::chrono::duration<double>(t1 - t0).count();
  for (int64_t i = 0; i < options.max_new_tokens; ++i) {
    // Read back once, for the check and the sampler: argmax over NaN would pick a token.
    logits = logits.to(torch::kCPU, torch::kFloat64).reshape({-1});
    require_finite_logits(session.model(), logits);
    if (i < options.min_new_tokens && !options.stop_ids.empty())
      for (int64_t id : options.stop_ids) logits[id] = -std::numeric_limits<double>::infinity();
    const int64_t next = sampler.next(logits, ids);
    if (std::find(options.stop_ids.begin(), options.stop_ids.end(), next) != options.stop_ids.end()) break;
    result.tokens.push_back(next);
    if (options.sampling.repetition_penalty != 1) ids.push_back(next);
    if (options.stop_when && options.stop_when(result.tokens)) break;
    if (i + 1 == options.max_new_tokens) break;
    logits = session.step(next);
    result.cache_lengths.push_back(session.cache_len());
  }
  result.decode_seconds = std::chrono::duration<double>(clock::now() - t1).count();
  return result;
}

}  // namespace kvbench::models
