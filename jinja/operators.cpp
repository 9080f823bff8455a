// Python's arithmetic on template values.
#include <cmath>

#include "jinja/builtins.hpp"

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
  if (overflow) throw OperationError("integer overflow (values beyond 64 bits are not supported)");
  return v;
}

Value repeat(const Value& seq, int64_t times) {
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += seq.as_string();
    return Value(out);
  }
  List out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
  return Value(out);
}

}  // namespace

Value binary_operation(const std::string& op, const Value& l, const Value& r) {
  if (op == "~") return Value(l.str() + r.str());
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
    if (l.is_string() && r.is_string()) return Value(l.as_string() + r.as_string());
    if (l.is_list() && r.is_list()) {
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
      int64_t q = a / b, m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) {
        --q;
        m += b;
      }
      return Value(op == "//" ? q : m);
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
    return Value(std::pow(l.as_number(), r.as_number()));
  }
  throw OperationError("unknown operator " + op);
}

Value unary_minus(const Value& v) {
  if (v.is_undefined()) v.fail_undefined();
  if (v.is_float()) return Value(-v.as_number());
  if (v.is_number()) return Value(-v.as_int());
  throw OperationError("bad operand type for unary -: '" + v.type_name() + "'");
}

}  // namespace kvbench::jinja
