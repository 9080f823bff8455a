#pragma once
// Prompt in, continuation out, under any policy/protocol, with prefill/decode timings.
#include <functional>
#include <vector>

#include "models/inference_session.hpp"
#include "models/logits_processors.hpp"

namespace kvbench::models {

struct GenerationOptions {
  int64_t max_new_tokens = 64;
  SamplingSettings sampling;  // greedy by default
  uint64_t seed = 0;
  std::vector<int64_t> stop_ids;  // e.g. EOS; the stop token is not included in the output
  // HF min_new_tokens: the stop ids are masked out (logit -inf) until this many tokens exist
  // (LongBench samsum's min_length = context_length + 1 is min_new_tokens = 1).
  int64_t min_new_tokens = 0;
  // Called with the tokens generated so far; true stops (task stop strings such as "###").
  std::function<bool(const std::vector<int64_t>&)> stop_when;
};

struct GenerationResult {
  std::vector<int64_t> tokens;
  // The longest head's cache after the prefill, then after each decoding step: what a policy
  // that compresses while generating holds, step by step.
  std::vector<int64_t> cache_lengths;
  double prefill_seconds = 0;
  double decode_seconds = 0;
};

GenerationResult generate(InferenceSession& session, const std::vector<int64_t>& prompt, const GenerationOptions& options);

}  // namespace kvbench::models
