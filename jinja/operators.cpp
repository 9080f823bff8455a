// Python's arithmetic on template values.
#include <cmath>

#include "jinja/builtins.hpp"
#include "jinja/limits.hpp"

namespace kvbench::jinja {
namespace {

[[noreturn]] void unsupported(const std::string& op, const Value& l, const Value& r) {
  if (op == "+" && l.is_string())
    throw OperationError("can only concatenate str (not \"" + r.type_name() + "\") to str");
  if (op == "+" && l.is_list())
    throw OperationError("can only concatenate list (not \"" + r.type_name() + "\") to list");
  throw OperationError("unsupported operand type(s) for " + op + ": '" + l.type_name() + "' and '" + r.type_name() + "'");
}

int64_t checked(bool overflow, int64_t v) {
  if (overflow) integer_overflow();
  return v;
}

// `seq * times`, its size checked before anything is allocated.
Value repeat(const Value& seq, int64_t times) {
  const uint64_t n = seq.is_string() ? seq.as_string().size() : seq.as_list().size();
  if (times <= 0 || n == 0) return seq.is_string() ? Value("") : Value(List{});
  const uint64_t total = static_cast<uint64_t>(times) > UINT64_MAX / n ? UINT64_MAX : n * times;
  if (seq.is_string()) {
    check_string_size(total);
    std::string out;
    out.reserve(total);
    out += seq.as_string();
    while (out.size() * 2 <= total) out += out;  // doubling: a few copies, not `times` appends
    out.append(out, 0, total - out.size());
    return Value(out);
  }
  check_list_size(total);
  List out;
  out.reserve(total);
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
  return Value(out);
}

// Python's float `**` errors, which C's pow() reports as inf.
double python_pow(double base, double exponent) {
  if (base == 0 && exponent < 0 && std::isfinite(exponent))
    throw OperationError("0.0 cannot be raised to a negative power");
  const double result = std::pow(base, exponent);
  if (std::isinf(result) && std::isfinite(base) && std::isfinite(exponent))
    throw OperationError("(34, 'Numerical result out of range')");
  return result;
}

}  // namespace

void integer_overflow() { throw OperationError("integer overflow (values beyond 64 bits are not supported)"); }

int64_t negate(int64_t v) {
  if (v == INT64_MIN) integer_overflow();
  return -v;
}

int64_t float_to_int(double x) {
  if (std::isnan(x)) throw OperationError("cannot convert float NaN to integer");
  if (std::isinf(x)) throw OperationError("cannot convert float infinity to integer");
  const double t = std::trunc(x);  // int64 holds exactly the doubles in [-2^63, 2^63)
  if (t < -9223372036854775808.0 || t >= 9223372036854775808.0) integer_overflow();
  return static_cast<int64_t>(t);
}

int64_t python_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // a % -1 is 0; computing it can trap for INT64_MIN
  const int64_t m = a % b;
  return m != 0 && ((m < 0) != (b < 0)) ? m + b : m;
}

Value binary_operation(const std::string& op, const Value& l, const Value& r) {
  if (op == "~") {
    const std::string a = l.str(), b = r.str();
    check_string_size(uint64_t{a.size()} + b.size());
    return Value(a + b);
  }
  if (l.is_undefined()) l.fail_undefined();
  if (r.is_undefined()) r.fail_undefined();
  const bool numbers = l.is_number() && r.is_number();
  const bool ints = numbers && !l.is_float() && !r.is_float();
  if (op == "+") {
    if (ints) {
      int64_t v;
      const bool overflow = __builtin_add_overflow(l.as_int(), r.as_int(), &v);
      return Value(checked(overflow, v));
    }
    if (numbers) return Value(l.as_number() + r.as_number());
    if (l.is_string() && r.is_string()) {
      check_string_size(uint64_t{l.as_string().size()} + r.as_string().size());
      return Value(l.as_string() + r.as_string());
    }
    if (l.is_list() && r.is_list()) {
      check_list_size(uint64_t{l.as_list().size()} + r.as_list().size());
      List out = l.as_list();
      out.insert(out.end(), r.as_list().begin(), r.as_list().end());
      return Value(out);
    }
    unsupported(op, l, r);
  }
  if (op == "-") {
    if (ints) {
      int64_t v;
      const bool overflow = __builtin_sub_overflow(l.as_int(), r.as_int(), &v);
      return Value(checked(overflow, v));
    }
    if (numbers) return Value(l.as_number() - r.as_number());
    unsupported(op, l, r);
  }
  if (op == "*") {
    if (ints) {
      int64_t v;
      const bool overflow = __builtin_mul_overflow(l.as_int(), r.as_int(), &v);
      return Value(checked(overflow, v));
    }
    if (numbers) return Value(l.as_number() * r.as_number());
    if ((l.is_string() || l.is_list()) && (r.is_int() || r.is_bool())) return repeat(l, r.as_int());
    if ((r.is_string() || r.is_list()) && (l.is_int() || l.is_bool())) return repeat(r, l.as_int());
    unsupported(op, l, r);
  }
  if (!numbers) {
    if (op == "%" && l.is_string()) throw OperationError("printf-style '%' string formatting is not supported");
    unsupported(op, l, r);
  }
  if (op == "/") {
    if (r.as_number() == 0) throw OperationError("division by zero");
    return Value(l.as_number() / r.as_number());
  }
  if (op == "//" || op == "%") {
    if (r.as_number() == 0) throw OperationError(ints ? "integer division or modulo by zero" : "float floor division by zero");
    if (ints) {
      const int64_t a = l.as_int(), b = r.as_int();
      if (op == "%") return Value(python_mod(a, b));
      if (b == -1) return Value(negate(a));  // INT64_MIN / -1 traps
      const int64_t q = a / b;               // C truncates; Python floors
      return Value(q * b != a && ((a < 0) != (b < 0)) ? q - 1 : q);
    }
    const double a = l.as_number(), b = r.as_number();
    double m = std::fmod(a, b);
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    if (op == "%") return Value(m == 0 ? std::copysign(0.0, b) : m);
    return Value(std::floor(a / b));
  }
  if (op == "**") {
    if (ints && r.as_int() >= 0) {
      int64_t result = 1, base = l.as_int();
      if (base == 0 || base == 1) return Value(r.as_int() == 0 ? int64_t{1} : base);
      if (base == -1) return Value(r.as_int() % 2 ? int64_t{-1} : int64_t{1});
      for (int64_t e = r.as_int(); e > 0; --e) {
        const bool overflow = __builtin_mul_overflow(result, base, &result);
        checked(overflow, 0);
      }
      return Value(result);
    }
    return Value(python_pow(l.as_number(), r.as_number()));
  }
  throw OperationError("unknown operator " + op);
}

Value unary_minus(const Value& v) {
  if (v.is_undefined()) v.fail_undefined();
  if (v.is_float()) return Value(-v.as_number());
  if (v.is_number()) return Value(negate(v.as_int()));
  throw OperationError("bad operand type for unary -: '" + v.type_name() + "'");
}

}  // namespace kvbench::jinja
