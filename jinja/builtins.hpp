#pragma once
// Jinja2's built-in filters, tests and operators and the Python methods and attribute rules of
// the sandboxed environment (ImmutableSandboxedEnvironment: methods that mutate a list or dict
// are refused). All throw OperationError where Jinja2 would raise.
#include <string>
#include <vector>

#include "jinja/value.hpp"

namespace kvbench::jinja {

bool has_filter(const std::string& name);
bool has_test(const std::string& name);
Value apply_filter(const std::string& name, const Value& operand, Arguments& args);
bool apply_test(const std::string& name, const Value& operand, Arguments& args);

// `obj.name` (attribute first, then item) and `obj[key]` (item first, then attribute), as
// Jinja2's sandbox getattr/getitem; a miss is an Undefined carrying Jinja2's message.
Value get_attribute(const Value& object, const std::string& name);
Value get_item(const Value& object, const Value& key);
// obj[start:stop:step] with Python semantics; null pointers are omitted bounds.
Value get_slice(const Value& object, const Value* start, const Value* stop, const Value* step);

Value binary_operation(const std::string& op, const Value& left, const Value& right);
Value unary_minus(const Value& operand);
// Python's ints are unbounded; ours are 64-bit, so what Python would widen is an error instead.
[[noreturn]] void integer_overflow();
int64_t negate(int64_t v);
// Python int(float): truncates; inf and nan raise.
int64_t float_to_int(double x);
// Python a % b (b != 0), which has the sign of b.
int64_t python_mod(int64_t a, int64_t b);
bool contains(const Value& container, const Value& item);  // Python `item in container`

// Python iteration: str yields characters, dict its keys, Undefined nothing.
List iterate(const Value& value);
int64_t python_len(const Value& value);

// Reads a builtin's arguments by position or keyword, as a Python signature would bind them.
class ArgumentReader {
 public:
  ArgumentReader(Arguments& args, std::string function, std::vector<std::string> parameters);
  bool has(size_t index) const;
  const Value& get(size_t index) const;  // throws when missing
  Value get_or(size_t index, Value fallback) const;
  // The positional arguments beyond the named parameters (for *args builtins).
  std::vector<Value> rest() const;

 private:
  Arguments& args_;
  std::string function_;
  std::vector<std::string> parameters_;
  std::vector<const Value*> bound_;
};

// Python's operator.index(): an int (or bool) where a size or count is expected.
int64_t integer_argument(const Value& v);

std::string python_strip(const std::string& s, const Value& chars, bool left, bool right);

}  // namespace kvbench::jinja
