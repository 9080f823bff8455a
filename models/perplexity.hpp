#pragma once
// Per-token negative log-likelihood of a text under a policy and protocol. With the stream
// protocol and block 1 every token is predicted from the evicted cache of its past
// (StreamingLLM/Cascade streaming perplexity); with oneshot the whole text is one forward.
#include <cstdint>
#include <string>
#include <vector>

#include "models/inference_session.hpp"
#include "tokenizers/tokenizer.hpp"

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

// The first `max_tokens` ids of tokenizer.encode(text, add_special_tokens) (all of them when there
// are fewer), from a prefix of the text: a 50 MB text scored for 200 tokens was tokenized whole
// (77 s, 5 GB). The prefix ends just before a space that follows a non-space, where every
// pre-tokenizer kvbench reads splits (sentencepiece's whitespace split; the GPT-2, Llama-3 and
// Qwen patterns start a piece at a space and never run one from a non-space into a space), so
// its ids are the whole text's up to the cut, but for what a post-processor appends at the end.
// A prefix is accepted once it gives kPrefixMargin ids more than asked, else it doubles; with no
// such cut in reach the whole text is tokenized. tests/models/prefix_tokens_test.cpp compares it
// with tokenizing the whole text, for every tokenizer format.
constexpr int64_t kPrefixMargin = 64;
std::vector<int> encode_prefix(const Tokenizer& tokenizer, const std::string& text, int64_t max_tokens,
                               bool add_special_tokens);

}  // namespace kvbench::models
