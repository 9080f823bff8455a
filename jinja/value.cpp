#include "jinja/value.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "jinja/limits.hpp"
#include "jinja/utf8.hpp"

namespace kvbench::jinja {

// Lookups scan the keys: a step per key compared.
size_t Dict::index_of(const Value& key) const {
  size_t i = 0;
  while (i < items.size() && !equals(items[i].first, key)) ++i;
  charge_steps(i);
  return i;
}

const Value* Dict::find(const Value& key) const {
  const size_t i = index_of(key);
  return i < items.size() ? &items[i].second : nullptr;
}

void Dict::set(const Value& key, Value value) {
  const size_t i = index_of(key);
  if (i < items.size())
    items[i].second = std::move(value);
  else
    items.emplace_back(key, std::move(value));
}

namespace {

int checked_depth(int depth) {
  if (depth > kMaxValueDepth)
    throw OperationError("value nested too deeply (limit: " + std::to_string(kMaxValueDepth) + " levels)");
  return depth;
}

}  // namespace

Value::Value(std::string s) : kind_(Kind::kString) {
  if (RenderBudget::current()) {
    check_string_size(s.size());
    charge_bytes(s.size());
  }
  string_ = std::make_shared<const std::string>(std::move(s));
}

Value::Value(List l) : kind_(Kind::kList) {
  if (RenderBudget::current()) {
    check_list_size(l.size());
    charge_items(l.size());
  }
  int deepest = 0;
  for (const auto& item : l) deepest = std::max(deepest, item.depth_);
  depth_ = checked_depth(deepest + 1);
  list_ = std::make_shared<List>(std::move(l));
}

Value::Value(Dict d) : kind_(Kind::kDict) {
  if (RenderBudget::current()) {
    check_list_size(d.items.size());
    charge_items(2 * uint64_t{d.items.size()});
  }
  int deepest = 0;
  for (const auto& [k, v] : d.items) deepest = std::max({deepest, k.depth_, v.depth_});
  depth_ = checked_depth(deepest + 1);
  dict_ = std::make_shared<Dict>(std::move(d));
}

Value::Value(std::shared_ptr<Object> o) : kind_(Kind::kObject) {
  int deepest = 0;
  for (const auto& [k, v] : o->attributes) deepest = std::max(deepest, v.depth_);
  depth_ = checked_depth(deepest + 1);
  object_ = std::move(o);
}

Value Value::undefined(std::string hint) {
  Value v;
  v.hint_ = std::move(hint);
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value Value::tuple(List items) {
  Value v(std::move(items));
  v.tuple_ = true;
  return v;
}

Value Value::function(std::string name, std::function<Value(Arguments&)> call) {
  return Value(std::make_shared<Function>(Function{std::move(name), std::move(call)}));
}

Value Value::method(const Value& self, std::string name, std::function<Value(Arguments&)> call) {
  Value v = function(std::move(name), std::move(call));
  v.depth_ = checked_depth(self.depth_ + 1);
  return v;
}

namespace {

template <typename Json>
Value convert(const Json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value(j.template get<bool>());
    case nlohmann::json::value_t::number_integer: return Value(j.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = j.template get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<int64_t>(u));
    }
    case nlohmann::json::value_t::number_float: return Value(j.template get<double>());
    case nlohmann::json::value_t::string: return Value(j.template get<std::string>());
    case nlohmann::json::value_t::array: {
      List list;
      list.reserve(j.size());
      for (const auto& e : j) list.push_back(convert(e));
      return Value(std::move(list));
    }
    case nlohmann::json::value_t::object: {
      Dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d.items.emplace_back(Value(it.key()), convert(it.value()));
      return Value(std::move(d));
    }
    default: throw OperationError("binary JSON values have no template equivalent");
  }
}

std::string string_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t cp : utf8::decode(s)) {
    char buf[12];
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      utf8::append(out, cp);
    }
  }
  out += quote;
  return out;
}

int number_rank(const Value& v) { return v.is_number() ? 1 : 0; }

}  // namespace

Value Value::from_json(const nlohmann::ordered_json& j) { return convert(j); }
Value Value::from_json(const nlohmann::json& j) { return convert(j); }

void Value::fail_undefined() const {
  throw OperationError(hint_.empty() ? "'undefined' is undefined" : hint_);
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool:
    case Kind::kInt: return int_ != 0;
    case Kind::kFloat: return float_ != 0.0;
    case Kind::kString: return !string_->empty();
    case Kind::kList: return !list_->empty();
    case Kind::kDict: return !dict_->items.empty();
    default: return true;
  }
}

std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // Shortest digits that round-trip, as Python's repr.
  char buf[40];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  std::string s(buf);
  const bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  const auto e_pos = s.find('e');
  const int exponent = std::atoi(s.c_str() + e_pos + 1);
  std::string digits;
  for (size_t i = 0; i < e_pos; ++i)
    if (s[i] != '.') digits += s[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out = digits + std::string(static_cast<size_t>(exponent + 1 - static_cast<int>(digits.size())), '0') + ".0";
    } else {
      out = digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[24];
    std::snprintf(e, sizeof e, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += e;
  }
  return negative ? "-" + out : out;
}

std::string Value::str() const {
  switch (kind_) {
    case Kind::kUndefined: return "";
    case Kind::kString: return *string_;
    default: return repr();
  }
}

std::string Value::repr() const {
  switch (kind_) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "None";
    case Kind::kBool: return int_ ? "True" : "False";
    case Kind::kInt: return std::to_string(int_);
    case Kind::kFloat: return float_repr(float_);
    case Kind::kString: return string_repr(*string_);
    case Kind::kList: {
      WalkLevel level("print");
      charge_items(list_->size());
      std::string out = tuple_ ? "(" : "[";
      for (size_t i = 0; i < list_->size(); ++i) {
        append_checked(out, i ? ", " : "");
        append_checked(out, (*list_)[i].repr());
      }
      if (tuple_ && list_->size() == 1) out += ",";
      return out + (tuple_ ? ")" : "]");
    }
    case Kind::kDict: {
      WalkLevel level("print");
      charge_items(dict_->items.size());
      std::string out = "{";
      bool first = true;
      for (const auto& [k, v] : dict_->items) {
        append_checked(out, first ? "" : ", ");
        append_checked(out, k.repr() + ": ");
        append_checked(out, v.repr());
        first = false;
      }
      return out + "}";
    }
    case Kind::kObject: {
      if (object_->type_name != "Namespace") return "<" + object_->type_name + " object>";
      WalkLevel level("print");  // a namespace may contain itself
      charge_items(object_->attributes.size());
      std::string out = "<Namespace {";
      bool first = true;
      for (const auto& [k, v] : object_->attributes) {
        append_checked(out, first ? "" : ", ");
        append_checked(out, string_repr(k) + ": ");
        append_checked(out, v.repr());
        first = false;
      }
      return out + "}>";
    }
    case Kind::kFunction: return "<function " + function_->name + ">";
  }
  return "";
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return "list";
    case Kind::kDict: return "dict";
    case Kind::kObject: return object_->type_name;
    case Kind::kFunction: return "function";
  }
  return "";
}

bool Value::identical(const Value& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kBool:
    case Kind::kInt: return int_ == o.int_;  // small ints are cached in CPython
    case Kind::kFloat: return float_ == o.float_;
    case Kind::kString:
      if (string_ == o.string_) return true;
      if (string_->size() != o.string_->size()) return false;
      charge_bytes(string_->size());
      return *string_ == *o.string_;
    case Kind::kList: return list_ == o.list_;
    case Kind::kDict: return dict_ == o.dict_;
    case Kind::kObject: return object_ == o.object_;
    case Kind::kFunction: return function_ == o.function_;
  }
  return false;
}

bool equals(const Value& a, const Value& b) {
  if (number_rank(a) && number_rank(b)) {
    if (a.is_float() || b.is_float()) return a.as_number() == b.as_number();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString:
      if (a.as_string().size() != b.as_string().size()) return false;
      charge_bytes(a.as_string().size());
      return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      const List &x = a.as_list(), &y = b.as_list();
      if (x.size() != y.size()) return false;
      WalkLevel level("compare");
      charge_steps(x.size());
      for (size_t i = 0; i < x.size(); ++i)
        if (!equals(x[i], y[i])) return false;
      return true;
    }
    case Value::Kind::kDict: {
      const Dict &x = a.as_dict(), &y = b.as_dict();
      if (x.items.size() != y.items.size()) return false;
      WalkLevel level("compare");
      for (const auto& [k, v] : x.items) {
        const Value* other = y.find(k);
        if (!other || !equals(v, *other)) return false;
      }
      return true;
    }
    default: return a.identical(b);
  }
}

bool less_than(const Value& a, const Value& b) {
  if (a.is_undefined()) a.fail_undefined();
  if (b.is_undefined()) b.fail_undefined();
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_number() < b.as_number();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) {
    charge_bytes(std::min(a.as_string().size(), b.as_string().size()));
    return a.as_string() < b.as_string();  // UTF-8 bytes order = code points
  }
  if (a.is_list() && b.is_list()) {
    const List &x = a.as_list(), &y = b.as_list();
    WalkLevel level("compare");
    charge_steps(std::min(x.size(), y.size()));
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return less_than(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  throw OperationError("'<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

}  // namespace kvbench::jinja
