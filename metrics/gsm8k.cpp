#include "metrics/gsm8k.hpp"

#include <cstring>

#include "metrics/python_str.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {

namespace {

// Length of the run of characters from `chars` starting at `from`.
size_t run(const std::string& s, size_t from, const char* chars) {
  size_t n = 0;
  while (from + n < s.size() && std::strchr(chars, s[from + n]) != nullptr && s[from + n] != '\0') ++n;
  return n;
}

const char* kDigits = "0123456789";
const char* kNumberish = "$0123456789.,";  // [$0-9.,]
const char* kStrictTail = "0123456789.,";  // [0-9\.\,]

// RegexFilter: the chosen match, stripped, or the fallback. (The patterns are ASCII, so a
// byte scan finds what Python's re finds on code points: no UTF-8 byte of a non-ASCII
// character is in any class.)
std::string filtered(const std::string& match, bool found) { return found ? python_strip(match) : kGsm8kInvalid; }

// re.sub(pattern, "", s) for `\.$`: one '.' at the end, or just before a final newline.
std::string drop_final_period(const std::string& s) {
  const size_t n = s.size();
  if (n >= 1 && s[n - 1] == '.') return s.substr(0, n - 1);
  if (n >= 2 && s[n - 1] == '\n' && s[n - 2] == '.') return s.substr(0, n - 2) + "\n";
  return s;
}

std::string normalise(std::string s) {
  s = python_replace(s, ",", "");
  s = python_replace(s, "$", "");
  const size_t marker = s.rfind("#### ");  // (?s).*#### : greedy, through the last marker
  if (marker != std::string::npos) s = s.substr(marker + 5);
  return python_lower(drop_final_period(s));
}

}  // namespace

std::string gsm8k_strict_answer(const std::string& output) {
  for (size_t at = output.find("#### "); at != std::string::npos; at = output.find("#### ", at + 1)) {
    const size_t from = at + 5;
    const size_t signed_run = from < output.size() && output[from] == '-' ? run(output, from + 1, kStrictTail) : 0;
    if (signed_run > 0) return filtered(output.substr(from, signed_run + 1), true);
    const size_t plain = run(output, from, kStrictTail);
    if (plain > 0) return filtered(output.substr(from, plain), true);
  }
  return filtered("", false);
}

std::string gsm8k_flexible_answer(const std::string& output) {
  std::string last;
  bool found = false;
  for (size_t i = 0; i < output.size();) {
    const bool minus = output[i] == '-';
    size_t length = 0;
    if (size_t n = run(output, i + (minus ? 1 : 0), kNumberish); n >= 2) length = n + (minus ? 1 : 0);  // (-?[$0-9.,]{2,})
    else if (size_t d = run(output, i + (minus ? 1 : 0), kDigits); d >= 1) length = d + (minus ? 1 : 0);  // (-?[0-9]+)
    if (length == 0) {
      ++i;
      continue;
    }
    last = output.substr(i, length);
    found = true;
    i += length;
  }
  return filtered(last, found);
}

bool gsm8k_exact_match(const std::string& prediction, const std::string& reference) {
  return normalise(prediction) == normalise(reference);
}

}  // namespace kvbench::metrics
