#include "policies/budget.hpp"

#include <cmath>
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

Budget Budget::parse(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("budget is empty: give a token count (512), a percentage (20%) or 'full'");
  if (text == "full" || text == "inf") return unlimited();
  try {
    size_t used = 0;
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
    throw std::invalid_argument("budget must be a token count (512), a percentage (20%) or 'full', got '" + text + "'");
  } catch (const std::out_of_range&) {
    throw std::invalid_argument("budget out of range: '" + text + "'");
  }
}

int64_t Budget::resolve(int64_t prompt_len) const {
  if (tokens_) return *tokens_;
  if (fraction_) return std::max<int64_t>(1, std::llround(*fraction_ * static_cast<double>(prompt_len)));
  return kUnlimitedTokens;
}

std::string Budget::to_string() const {
  if (tokens_) return std::to_string(*tokens_);
  if (fraction_) {
    std::ostringstream out;
    out << *fraction_ * 100.0 << "%";
    return out.str();
  }
  return "full";
}

}  // namespace kvbench::policies
