#include "policies/budget.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace kvbench::policies {

Budget Budget::tokens(int64_t n) {
  if (n < 1) throw std::invalid_argument("budget must be at least 1 token, got " + std::to_string(n));
  Budget b;
  b.tokens_ = n;
  return b;
}

Budget Budget::fraction(double f) {
  if (!(f > 0.0 && f <= 1.0)) throw std::invalid_argument("budget fraction must be in (0, 100%], got " + std::to_string(f));
  Budget b;
  b.fraction_ = f;
  return b;
}

Budget Budget::compression_ratio(double r) {
  if (!(r >= 0.0 && r < 1.0))
    throw std::invalid_argument("compression ratio (the fraction removed) must be in [0, 1), got " + std::to_string(r));
  Budget b;
  b.ratio_ = r;
  return b;
}

namespace {
constexpr const char* kForms = "a token count (512), a percentage kept (20%), a compression ratio (ratio:0.5) or 'full'";
constexpr const char* kRatioPrefix = "ratio:";

// The shortest decimal that reads back as `x`: the normalised text a job id hashes names the
// ratio the job ran with.
std::string shortest_decimal(double x) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, x);
    if (std::strtod(text, nullptr) == x) break;
  }
  return text;
}
}  // namespace

Budget Budget::parse(const std::string& text) {
  if (text.empty()) throw std::invalid_argument(std::string("budget is empty: give ") + kForms);
  if (text == "full" || text == "inf") return unlimited();
  try {
    size_t used = 0;
    if (text.rfind(kRatioPrefix, 0) == 0) {
      const std::string number = text.substr(std::string(kRatioPrefix).size());
      double r = std::stod(number, &used);
      if (used != number.size()) throw std::invalid_argument("");
      if (!(r >= 0.0 && r < 1.0))
        throw std::invalid_argument("budget compression ratio (the fraction removed) must be in [0, 1), got '" + text + "'");
      return compression_ratio(r);
    }
    if (text.back() == '%') {
      double pct = std::stod(text.substr(0, text.size() - 1), &used);
      if (used != text.size() - 1) throw std::invalid_argument("");
      // Named as written: "150%", not the fraction 1.500000.
      if (!(pct > 0.0 && pct <= 100.0)) throw std::invalid_argument("budget percentage must be in (0, 100%], got '" + text + "'");
      return fraction(pct / 100.0);
    }
    long long n = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument("");
    return tokens(n);
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find("budget") == 0) throw;
    throw std::invalid_argument(std::string("budget must be ") + kForms + ", got '" + text + "'");
  } catch (const std::out_of_range&) {
    throw std::invalid_argument("budget out of range: '" + text + "'");
  }
}

int64_t Budget::resolve(int64_t prompt_len) const {
  if (tokens_) return *tokens_;
  if (fraction_) return std::max<int64_t>(1, std::llround(*fraction_ * static_cast<double>(prompt_len)));
  // kvpress: n_kept = int(k_len * (1 - compression_ratio)), in doubles, truncated.
  if (ratio_) return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(prompt_len) * (1.0 - *ratio_)));
  return kUnlimitedTokens;
}

std::string Budget::to_string() const {
  if (tokens_) return std::to_string(*tokens_);
  if (fraction_) {
    std::ostringstream out;
    out << *fraction_ * 100.0 << "%";
    return out.str();
  }
  if (ratio_) return kRatioPrefix + shortest_decimal(*ratio_);
  return "full";
}

}  // namespace kvbench::policies
