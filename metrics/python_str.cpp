#include "metrics/python_str.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace kvbench::metrics {

std::string python_int_str(int64_t value) { return std::to_string(value); }

std::string python_float_str(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // Shortest round-trip digits in scientific form "d.ddde±XX" (C++17 to_chars, like Python's repr).
  char buffer[64];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  if (r.ec != std::errc()) throw std::runtime_error("python_float_str: cannot format");
  std::string text(buffer, r.ptr);
  std::string sign;
  if (text[0] == '-') sign = "-", text.erase(0, 1);
  const size_t e = text.find('e');
  std::string digits = text.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::atoi(text.c_str() + e + 1);
  const int decpt = exponent + 1;  // digits[0..decpt) lie before the decimal point
  if (decpt > -4 && decpt <= 16) {
    std::string out;
    if (decpt <= 0) {
      out = "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
    } else if (static_cast<size_t>(decpt) >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(decpt) - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
    }
    return sign + out;
  }
  std::string mantissa = digits.substr(0, 1);
  if (digits.size() > 1) mantissa += "." + digits.substr(1);
  const int shown = decpt - 1;
  std::string exp_text = std::to_string(std::abs(shown));
  if (exp_text.size() < 2) exp_text = "0" + exp_text;
  return sign + mantissa + "e" + (shown < 0 ? "-" : "+") + exp_text;
}

std::string python_replace(const std::string& s, const std::string& old, const std::string& replacement) {
  if (old.empty() || s.find(old) == std::string::npos) return s;
  std::string out;
  out.reserve(s.size());
  std::size_t pos = 0;
  for (std::size_t hit; (hit = s.find(old, pos)) != std::string::npos; pos = hit + old.size()) {
    out.append(s, pos, hit - pos);
    out += replacement;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

}  // namespace kvbench::metrics
