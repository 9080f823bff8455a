// The number filters of Jinja2: abs, round (Python's correctly rounded round()), int and float
// (Python's parsing of numeric strings). Dispatched from filters.cpp.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "jinja/builtins.hpp"
#include "jinja/filter_families.hpp"
#include "jinja/limits.hpp"
#include "jinja/utf8.hpp"

namespace kvbench::jinja {
namespace {

// Python round(x, n): correctly rounded, ties to even (glibc printf rounds the same way).
double python_round(double x, int64_t digits) {
  if (!std::isfinite(x)) return x;
  if (digits > 300 || digits < -300) return digits > 0 ? x : 0.0 * x;
  if (digits >= 0) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(digits), x);
    return std::strtod(buf, nullptr);
  }
  const double scale = std::pow(10.0, static_cast<double>(-digits));
  return std::nearbyint(x / scale) * scale;
}

// Python int(s, base) for a stripped string: false when it is not an integer literal.
bool parse_int(const std::string& s, int64_t base, int64_t* out) {
  if (s.empty() || base < 0 || base == 1 || base > 36) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, static_cast<int>(base));
  if (end != s.c_str() + s.size()) return false;
  if (errno == ERANGE) integer_overflow();  // Python would make a big integer
  *out = v;
  return true;
}

// Python float(s) for a stripped string: out-of-range literals are ±inf or 0, as in Python.
bool parse_float(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

}  // namespace

std::optional<Value> number_filter(const std::string& name, const Value& v, const ArgumentReader& r) {
  if (name == "abs") {
    if (v.is_float()) return Value(std::fabs(v.as_number()));
    if (v.is_number()) return Value(v.as_int() < 0 ? negate(v.as_int()) : v.as_int());
    if (v.is_undefined()) v.fail_undefined();
    throw OperationError("bad operand type for abs(): '" + v.type_name() + "'");
  }
  if (name == "round") {
    const int64_t precision = r.get_or(0, Value(0)).as_int();
    const std::string method = r.get_or(1, Value("common")).str();
    if (method != "common" && method != "ceil" && method != "floor")
      throw OperationError("method must be common, ceil or floor");
    if (v.is_undefined()) v.fail_undefined();
    if (!v.is_number()) throw OperationError("type " + v.type_name() + " doesn't define __round__ method");
    if (method == "common") {
      if (!v.is_float()) return v.is_bool() ? Value(v.as_int()) : v;
      return Value(python_round(v.as_number(), precision));
    }
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = v.as_number() * scale;
    return Value((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
  }
  if (name == "int") {
    const Value fallback = r.get_or(0, Value(0));
    const int64_t base = r.get_or(1, Value(10)).as_int();
    // Jinja2: int(value[, base]), else int(float(value)), else the default; only ValueError
    // (nan) falls back, an infinity raises.
    if (v.is_bool() || v.is_int()) return Value(v.as_int());
    double d = NAN;
    if (v.is_float()) d = v.as_number();
    if (v.is_string()) {
      const std::string s = python_strip(v.as_string(), Value::none(), true, true);
      int64_t i;
      if (parse_int(s, base, &i)) return Value(i);
      if (!parse_float(s, &d)) d = NAN;
    }
    return std::isnan(d) ? fallback : Value(float_to_int(d));
  }
  if (name == "float") {
    const Value fallback = r.get_or(0, Value(0.0));
    if (v.is_number()) return Value(v.as_number());
    double d;
    if (v.is_string() && parse_float(python_strip(v.as_string(), Value::none(), true, true), &d)) return Value(d);
    return fallback;
  }
  return std::nullopt;
}

}  // namespace kvbench::jinja
