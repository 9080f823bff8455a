#pragma once
// A template value with Python semantics: what Jinja2 would hold for the JSON a chat template is
// given (None, bool, int, float, str, list, dict) plus Jinja's own kinds (Undefined, namespace and
// loop objects, callables). Lists, dicts and objects are shared, as Python references are.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kvbench::jinja {

class Value;
using List = std::vector<Value>;

// Insertion-ordered, as a Python dict.
struct Dict {
  std::vector<std::pair<Value, Value>> items;
  const Value* find(const Value& key) const;
  void set(const Value& key, Value value);
  size_t index_of(const Value& key) const;  // items.size() when absent
};

// A Jinja object with named attributes: namespace(), loop, cycler. Only namespaces accept
// `{% set ns.attr = ... %}`.
struct Object {
  std::string type_name;
  std::map<std::string, Value> attributes;
  bool assignable = false;
};

struct Arguments {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
};

struct Function {
  std::string name;
  std::function<Value(Arguments&)> call;
};

// An operation Python/Jinja2 would refuse (TypeError, UndefinedError, SecurityError...). The
// evaluator adds the template location.
class OperationError : public std::runtime_error {
 public:
  explicit OperationError(const std::string& message) : std::runtime_error(message) {}
};

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kObject, kFunction };

  Value() = default;  // undefined, no name
  Value(bool b) : kind_(Kind::kBool), int_(b) {}
  Value(int i) : kind_(Kind::kInt), int_(i) {}
  Value(int64_t i) : kind_(Kind::kInt), int_(i) {}
  Value(double f) : kind_(Kind::kFloat), float_(f) {}
  // Strings, lists and dicts built during a render are charged to its budget and refused past
  // the size limits; containers are refused past kMaxValueDepth levels (jinja/limits.hpp).
  Value(std::string s);
  Value(const char* s) : Value(std::string(s)) {}
  Value(List l);
  Value(Dict d);
  // An object's depth is taken from its attributes now: exact for loop objects, which never
  // change; namespaces can change later, so walks over values also count their depth.
  Value(std::shared_ptr<Object> o);
  Value(std::shared_ptr<Function> f) : kind_(Kind::kFunction), function_(std::move(f)) {}

  // `hint` is the message Jinja2's UndefinedError would carry when the value is used.
  static Value undefined(std::string hint);
  static Value none();
  static Value function(std::string name, std::function<Value(Arguments&)> call);
  // A function that holds `self` (a bound method such as `list.copy`): it nests one level deeper.
  static Value method(const Value& self, std::string name, std::function<Value(Arguments&)> call);
  // A Python tuple: a list that prints with parentheses (dict.items(), dictsort, `(a, b)`).
  static Value tuple(List items);
  static Value from_json(const nlohmann::ordered_json& j);
  static Value from_json(const nlohmann::json& j);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }  // bool excluded, unlike Python
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kList && tuple_; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_function() const { return kind_ == Kind::kFunction; }

  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return int_; }     // int or bool
  double as_number() const { return kind_ == Kind::kFloat ? float_ : static_cast<double>(int_); }
  const std::string& as_string() const { return *string_; }
  const List& as_list() const { return *list_; }
  const Dict& as_dict() const { return *dict_; }
  Object& as_object() const { return *object_; }
  const Function& as_function() const { return *function_; }
  const std::string& undefined_hint() const { return hint_; }
  // Levels of containers (list, dict, object, bound method) below and including this value.
  int depth() const { return depth_; }

  // Throws OperationError with the undefined's hint.
  [[noreturn]] void fail_undefined() const;

  bool truthy() const;          // Python bool()
  std::string str() const;      // Python str(); undefined prints empty
  std::string repr() const;     // Python repr(); OperationError past the size or depth limits
  std::string type_name() const;  // as Python's type(x).__name__
  bool identical(const Value& other) const;  // Python `is`

 private:
  Kind kind_ = Kind::kUndefined;
  int depth_ = 0;
  int64_t int_ = 0;
  double float_ = 0;
  std::shared_ptr<const std::string> string_;
  std::shared_ptr<List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<Object> object_;
  std::shared_ptr<Function> function_;
  std::string hint_;
  bool tuple_ = false;
};

// Python ==, and <, which throws OperationError where Python raises TypeError (or when the values
// nest too deeply to compare).
bool equals(const Value& a, const Value& b);
bool less_than(const Value& a, const Value& b);

// Python's repr of a float ("1.0", "0.1", "1e+20", "inf").
std::string float_repr(double x);

// Python's json.dumps(value, ensure_ascii=False, indent, separators, sort_keys), as transformers'
// tojson filter calls it. indent < 0 = None; empty separators = Python's default for the indent.
std::string json_dumps(const Value& value, int64_t indent = -1, const std::pair<std::string, std::string>* separators = nullptr,
                       bool sort_keys = false);

}  // namespace kvbench::jinja
