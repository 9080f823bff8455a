#pragma once
// Per-token negative log-likelihood of a text under a policy and protocol. With the stream
// protocol and block 1 every token is predicted from the evicted cache of its past
// (StreamingLLM/Cascade streaming perplexity); with oneshot the whole text is one forward.
#include <vector>

#include "models/inference_session.hpp"

namespace kvbench::models {

struct PerplexityResult {
  std::vector<double> nll;  // nll[i]: -log p(token i+1 | tokens 0..i)
  double mean_nll = 0;
  double perplexity = 0;
  int64_t max_cache_len = 0;
  int64_t peak_logical_bytes = 0;
  double seconds = 0;
};

// tokens must start with BOS (it is scored as context only). Every following token is scored.
PerplexityResult evaluate_perplexity(InferenceSession& session, const std::vector<int64_t>& tokens);

}  // namespace kvbench::models
