// Jinja2's built-in tests (`x is defined`, `x is divisibleby 3`...).
#include <map>

#include "jinja/builtins.hpp"
#include "jinja/limits.hpp"

namespace kvbench::jinja {
namespace {

using Test = bool (*)(const Value&, ArgumentReader&);

bool compare_test(const std::string& op, const Value& a, const Value& b) {
  if (op == "eq") return equals(a, b);
  if (op == "ne") return !equals(a, b);
  if (op == "lt") return less_than(a, b);
  if (op == "le") return less_than(a, b) || equals(a, b);
  if (op == "gt") return less_than(b, a);
  return less_than(b, a) || equals(a, b);
}

bool has_lower_upper(const Value& v, bool want_lower) {
  if (!v.is_string()) throw OperationError("'" + v.type_name() + "' object has no attribute '" + (want_lower ? "islower" : "isupper") + "'");
  bool cased = false, lower = false, upper = false;
  for (char c : v.as_string()) {
    cased |= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    lower |= c >= 'a' && c <= 'z';
    upper |= c >= 'A' && c <= 'Z';
  }
  return cased && (want_lower ? !upper : !lower);
}

int64_t integer_of(const Value& v) {
  if (v.is_undefined()) v.fail_undefined();
  if (!v.is_int() && !v.is_bool()) throw OperationError("not all arguments converted during string formatting");
  return v.as_int();
}

const std::map<std::string, std::vector<std::string>>& test_parameters() {
  static const std::map<std::string, std::vector<std::string>> params = {
      {"defined", {}}, {"undefined", {}}, {"none", {}}, {"boolean", {}}, {"true", {}}, {"false", {}},
      {"integer", {}}, {"float", {}}, {"number", {}}, {"string", {}}, {"mapping", {}}, {"sequence", {}},
      {"iterable", {}}, {"callable", {}}, {"escaped", {}}, {"odd", {}}, {"even", {}}, {"lower", {}},
      {"upper", {}}, {"divisibleby", {"num"}}, {"sameas", {"other"}}, {"in", {"seq"}}, {"eq", {"other"}},
      {"equalto", {"other"}}, {"==", {"other"}}, {"ne", {"other"}}, {"!=", {"other"}}, {"lt", {"other"}},
      {"lessthan", {"other"}}, {"<", {"other"}}, {"le", {"other"}}, {"<=", {"other"}}, {"gt", {"other"}},
      {"greaterthan", {"other"}}, {">", {"other"}}, {"ge", {"other"}}, {">=", {"other"}}, {"filter", {}},
      {"test", {}}};
  return params;
}

}  // namespace

bool has_test(const std::string& name) { return test_parameters().count(name) > 0; }

bool apply_test(const std::string& name, const Value& v, Arguments& args) {
  charge_steps(1);  // select and reject apply a test per item
  ArgumentReader r(args, name, test_parameters().at(name));
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "sequence") return v.is_string() || v.is_list() || v.is_dict();
  if (name == "iterable") return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
  if (name == "callable") return v.is_function() || v.is_undefined();
  if (name == "escaped") return false;
  if (name == "odd") return integer_of(v) % 2 != 0;
  if (name == "even") return integer_of(v) % 2 == 0;
  if (name == "lower") return has_lower_upper(v, true);
  if (name == "upper") return has_lower_upper(v, false);
  if (name == "divisibleby") {
    const int64_t d = integer_of(r.get(0));
    if (d == 0) throw OperationError("integer division or modulo by zero");
    return python_mod(integer_of(v), d) == 0;
  }
  if (name == "sameas") return v.identical(r.get(0));
  if (name == "in") return contains(r.get(0), v);
  if (name == "filter") return v.is_string() && has_filter(v.as_string());
  if (name == "test") return v.is_string() && has_test(v.as_string());
  static const std::map<std::string, std::string> kCompare = {
      {"eq", "eq"}, {"equalto", "eq"}, {"==", "eq"}, {"ne", "ne"}, {"!=", "ne"}, {"lt", "lt"}, {"lessthan", "lt"},
      {"<", "lt"}, {"le", "le"}, {"<=", "le"}, {"gt", "gt"}, {"greaterthan", "gt"}, {">", "gt"}, {"ge", "ge"},
      {">=", "ge"}};
  return compare_test(kCompare.at(name), v, r.get(0));
}

}  // namespace kvbench::jinja
