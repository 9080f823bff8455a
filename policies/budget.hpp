#pragma once
// A cache budget: an absolute number of tokens per KV head (K-VEC's 128–1024) or a fraction of
// the prompt (BUZZ's 10–60 %, RoCo's 0.5). Sinks and windows count inside it unless a policy's
// paper says otherwise.
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
  // "512" -> tokens, "20%" -> fraction 0.2, "full"/"" -> unlimited; throws on anything else.
  static Budget parse(const std::string& text);

  bool is_unlimited() const { return !tokens_ && !fraction_; }
  bool is_fraction() const { return fraction_.has_value(); }
  // Tokens per KV head for a prompt of `prompt_len` tokens (fractions round to nearest, at least 1).
  int64_t resolve(int64_t prompt_len) const;
  std::string to_string() const;  // "512", "20%", "full"

 private:
  std::optional<int64_t> tokens_;
  std::optional<double> fraction_;
};

}  // namespace kvbench::policies
