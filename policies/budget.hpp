#pragma once
// A cache budget: an absolute number of tokens per KV head (K-VEC's 128–1024), a fraction of
// the prompt kept (BUZZ's 10–60 %, RoCo's 0.5), or kvpress's compression ratio, the fraction
// removed ("ratio:0.5"; ScorerPress.compress keeps int(k_len · (1 − ratio)) per head, truncated).
// Sinks and windows count inside it unless a policy's paper says otherwise.
#include <cstdint>
#include <optional>
#include <string>

namespace kvbench::policies {

// The resolved budget of "full": no eviction (Budget::resolve, SequenceInfo::unlimited).
inline constexpr int64_t kUnlimitedTokens = INT64_MAX;

class Budget {
 public:
  static Budget unlimited() { return Budget(); }
  static Budget tokens(int64_t n);
  static Budget fraction(double f);
  static Budget compression_ratio(double r);  // r in [0, 1): the fraction removed
  // "512" -> tokens, "20%" -> fraction 0.2, "ratio:0.75" -> compression ratio 0.75,
  // "full" -> unlimited; throws on anything else.
  static Budget parse(const std::string& text);

  bool is_unlimited() const { return !tokens_ && !fraction_ && !ratio_; }
  // A fraction or a compression ratio: the tokens kept depend on the prompt's length.
  std::optional<double> compression_ratio() const { return ratio_; }
  bool is_relative() const { return fraction_.has_value() || ratio_.has_value(); }
  // Tokens per KV head for a prompt of `prompt_len` tokens (fractions round to nearest,
  // compression ratios truncate as kvpress; at least 1).
  int64_t resolve(int64_t prompt_len) const;
  std::string to_string() const;  // "512", "20%", "ratio:0.75", "full"

 private:
  std::optional<int64_t> tokens_;
  std::optional<double> fraction_;
  std::optional<double> ratio_;
};

}  // namespace kvbench::policies
