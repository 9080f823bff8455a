// Attribute and item access, slicing, iteration, `in`, and the Python methods of dict and list
// that the sandbox allows. The methods of str are in string_methods.cpp.
#include <set>

#include "jinja/builtins.hpp"
#include "jinja/limits.hpp"
#include "jinja/string_methods.hpp"
#include "jinja/utf8.hpp"

namespace kvbench::jinja {
namespace {

// Jinja2's object_type_repr: "dict object", "None".
std::string object_type(const Value& v) { return v.is_none() ? "None" : v.type_name() + " object"; }

Value unsafe(const Value& object, const std::string& name) {
  return Value::undefined("access to attribute '" + name + "' of '" + object.type_name() + "' object is unsafe.");
}

Value dict_method(const Value& self, const std::string& name) {
  static const std::set<std::string> kUnsafe = {"update", "pop", "popitem", "setdefault", "clear", "fromkeys"};
  if (kUnsafe.count(name)) return unsafe(self, name);
  if (name != "items" && name != "keys" && name != "values" && name != "get" && name != "copy") return Value();
  return Value::method(self, "dict." + name, [self, name](Arguments& args) -> Value {
    const Dict& d = self.as_dict();
    if (name == "get") {
      ArgumentReader r(args, "dict.get", {"key", "default"});
      const Value* v = d.find(r.get(0));
      return v ? *v : r.get_or(1, Value::none());
    }
    if (name == "copy") return Value(Dict(d));
    List out;
    for (const auto& [k, v] : d.items) {
      if (name == "items")
        out.push_back(Value::tuple(List{k, v}));
      else
        out.push_back(name == "keys" ? k : v);
    }
    return Value(out);
  });
}

Value list_method(const Value& self, const std::string& name) {
  static const std::set<std::string> kUnsafe = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};
  if (kUnsafe.count(name)) return unsafe(self, name);
  if (name != "index" && name != "count" && name != "copy") return no_attribute(self, name);
  return Value::method(self, "list." + name, [self, name](Arguments& args) -> Value {
    const List& l = self.as_list();
    if (name == "copy") return Value(List(l));
    ArgumentReader r(args, "list." + name, {"value"});
    charge_steps(l.size());  // a comparison per item, at most
    int64_t count = 0;
    for (size_t i = 0; i < l.size(); ++i) {
      if (!equals(l[i], r.get(0))) continue;
      if (name == "index") return Value(static_cast<int64_t>(i));
      ++count;
    }
    if (name == "index") throw OperationError(r.get(0).repr() + " is not in list");
    return Value(count);
  });
}

}  // namespace

Value no_attribute(const Value& object, const std::string& name) {
  return Value::undefined("'" + object_type(object) + "' has no attribute '" + name + "'");
}

// Copies the items, so it costs as building a list does.
List iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList: charge_items(v.as_list().size()); return v.as_list();
    case Value::Kind::kDict: {
      charge_items(v.as_dict().items.size());
      List keys;
      for (const auto& kv : v.as_dict().items) keys.push_back(kv.first);
      return keys;
    }
    case Value::Kind::kString: {
      const auto cps = utf8::decode(v.as_string());
      check_list_size(cps.size());  // before allocating a value per character
      charge_items(cps.size());
      List chars;
      chars.reserve(cps.size());
      for (char32_t c : cps) {
        std::string s;
        utf8::append(s, c);
        chars.emplace_back(std::move(s));
      }
      return chars;
    }
    default: throw OperationError("'" + v.type_name() + "' object is not iterable");
  }
}

int64_t python_len(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return 0;
    case Value::Kind::kString: return static_cast<int64_t>(utf8::decode(v.as_string()).size());
    case Value::Kind::kList: return static_cast<int64_t>(v.as_list().size());
    case Value::Kind::kDict: return static_cast<int64_t>(v.as_dict().items.size());
    default: throw OperationError("object of type '" + v.type_name() + "' has no len()");
  }
}

Value get_attribute(const Value& object, const std::string& name) {
  switch (object.kind()) {
    case Value::Kind::kUndefined: object.fail_undefined();
    case Value::Kind::kString: return string_method(object, name);
    case Value::Kind::kDict: {
      Value method = dict_method(object, name);
      if (!method.is_undefined() || !method.undefined_hint().empty()) return method;
      if (const Value* v = object.as_dict().find(Value(name))) return *v;
      return no_attribute(object, name);
    }
    case Value::Kind::kList: return list_method(object, name);
    case Value::Kind::kObject: {
      auto& attrs = object.as_object().attributes;
      auto it = attrs.find(name);
      if (it != attrs.end()) return it->second;
      return no_attribute(object, name);
    }
    default: return no_attribute(object, name);
  }
}

Value get_item(const Value& object, const Value& key) {
  if (object.is_undefined()) object.fail_undefined();
  if (key.is_undefined() && !object.is_dict()) key.fail_undefined();
  if (object.is_dict()) {
    if (const Value* v = object.as_dict().find(key)) return *v;
  } else if ((object.is_list() || object.is_string()) && (key.is_int() || key.is_bool())) {
    const bool is_list = object.is_list();
    std::vector<char32_t> cps;
    if (!is_list) cps = utf8::decode(object.as_string());
    const int64_t n = is_list ? static_cast<int64_t>(object.as_list().size()) : static_cast<int64_t>(cps.size());
    int64_t i = key.as_int();
    if (i < 0) i += n;
    if (i >= 0 && i < n) {
      if (is_list) return object.as_list()[static_cast<size_t>(i)];
      std::string c;
      utf8::append(c, cps[static_cast<size_t>(i)]);
      return Value(c);
    }
  }
  if (key.is_string()) return get_attribute(object, key.as_string());
  return Value::undefined(object_type(object) + " has no element " + key.repr());
}

Value get_slice(const Value& object, const Value* start, const Value* stop, const Value* step) {
  if (object.is_undefined()) object.fail_undefined();
  auto bound = [](const Value* v, const char* what) -> const Value* {
    if (!v || v->is_none()) return nullptr;
    if (v->is_undefined()) v->fail_undefined();
    if (!v->is_int() && !v->is_bool())
      throw OperationError(std::string("slice ") + what + " must be an integer or None, not " + v->type_name());
    return v;
  };
  start = bound(start, "indices");
  stop = bound(stop, "indices");
  step = bound(step, "indices");
  const int64_t s = step ? step->as_int() : 1;
  if (s == 0) throw OperationError("slice step cannot be zero");
  std::vector<char32_t> cps;
  const bool is_list = object.is_list();
  if (!is_list && !object.is_string()) throw OperationError("'" + object.type_name() + "' object is not subscriptable");
  if (!is_list) cps = utf8::decode(object.as_string());
  const int64_t n = is_list ? static_cast<int64_t>(object.as_list().size()) : static_cast<int64_t>(cps.size());
  auto clamp = [&](const Value* v, int64_t fallback) {
    if (!v) return fallback;
    int64_t i = v->as_int();
    if (i < 0) {
      i += n;
      if (i < 0) i = s < 0 ? -1 : 0;
    } else if (i >= n) {
      i = s < 0 ? n - 1 : n;
    }
    return i;
  };
  const int64_t b = clamp(start, s < 0 ? n - 1 : 0), e = clamp(stop, s < 0 ? -1 : n);
  List items;
  std::string text;
  for (int64_t i = b; s > 0 ? i < e : i > e; i += s) {
    if (is_list)
      items.push_back(object.as_list()[static_cast<size_t>(i)]);
    else
      utf8::append(text, cps[static_cast<size_t>(i)]);
  }
  return is_list ? Value(items) : Value(text);
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined: return false;
    case Value::Kind::kString:
      if (item.is_undefined()) item.fail_undefined();
      if (!item.is_string())
        throw OperationError("'in <string>' requires string as left operand, not " + item.type_name());
      return find_in(container.as_string(), item.as_string()) != std::string::npos;
    case Value::Kind::kList: {
      const List& items = container.as_list();
      size_t i = 0;
      while (i < items.size() && !equals(items[i], item)) ++i;
      charge_steps(i);  // a step per comparison
      return i < items.size();
    }
    case Value::Kind::kDict: return container.as_dict().find(item) != nullptr;
    default: throw OperationError("argument of type '" + container.type_name() + "' is not iterable");
  }
}

}  // namespace kvbench::jinja
