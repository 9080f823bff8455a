#include "models/perplexity.hpp"

#include <algorithm>
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

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// A cut at i: text[i] is a space and text[i - 1] is not whitespace. The last one at or before
// `near`, else the first after it; npos when the text has none.
size_t cut_near(const std::string& text, size_t near) {
  auto is_cut = [&](size_t i) { return i > 0 && text[i] == ' ' && !is_space(text[i - 1]); };
  for (size_t i = std::min(near, text.size() - 1); i > 0; --i)
    if (is_cut(i)) return i;
  for (size_t i = near + 1; i < text.size(); ++i)
    if (is_cut(i)) return i;
  return std::string::npos;
}

}  // namespace

std::vector<int> encode_prefix(const Tokenizer& tokenizer, const std::string& text, int64_t max_tokens,
                               bool add_special_tokens) {
  if (max_tokens < 0) throw std::invalid_argument("encode_prefix: max_tokens must be >= 0");
  auto first = [&](std::vector<int> ids) {
    if (static_cast<int64_t>(ids.size()) > max_tokens) ids.resize(static_cast<size_t>(max_tokens));
    return ids;
  };
  const int64_t wanted = max_tokens + kPrefixMargin;
  // Tokens average 3-5 bytes in English: one round for most texts, at most twice the text needed.
  size_t length = static_cast<size_t>(std::min<int64_t>(wanted, int64_t{1} << 40)) * 8;
  size_t last_cut = 0;
  while (length < text.size()) {
    const size_t cut = cut_near(text, length);
    if (cut == std::string::npos) break;
    if (cut > last_cut) {  // a longer prefix than the last one tried
      last_cut = cut;
      std::vector<int> ids = tokenizer.encode(text.substr(0, cut), add_special_tokens);
      if (static_cast<int64_t>(ids.size()) >= wanted) return first(std::move(ids));
    }
    length *= 2;
  }
  return first(tokenizer.encode(text, add_special_tokens));
}

}  // namespace kvbench::models
