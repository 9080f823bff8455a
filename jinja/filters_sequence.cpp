// The sequence filters of Jinja2: map, select, reject, selectattr, rejectattr (which take
// filters and tests by name), length, join, first, last, list, reverse, items, dictsort, sort,
// unique, min, max, sum, batch; and the attribute paths (`attribute="a.b.0"`) they read items by.
// Dispatched from filters.cpp.
#include <algorithm>
#include <cctype>
#include <string>

#include "jinja/builtins.hpp"
#include "jinja/filter_families.hpp"
#include "jinja/limits.hpp"
#include "jinja/utf8.hpp"

namespace kvbench::jinja {
namespace {

// Jinja2's attribute getter for map/sort/...: "a.b.0" = item lookups, integers as indexes.
Value attribute_path(const Value& item, const Value& attribute) {
  if (attribute.is_int()) return get_item(item, attribute);
  Value v = item;
  const std::string& path = attribute.str();
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool numeric = !part.empty() && part.size() < 19 && std::all_of(part.begin(), part.end(), ::isdigit);
    charge_steps(1);  // a lookup per part, and sort or map repeat the path per item
    v = get_item(v, numeric ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

Value lowered(const Value& v, bool case_sensitive) {
  if (case_sensitive || !v.is_string()) return v;
  std::string s = v.as_string();
  for (auto& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return Value(s);
}

Value sort_key(const Value& item, const Value& attribute, bool case_sensitive) {
  return lowered(attribute.is_none() ? item : attribute_path(item, attribute), case_sensitive);
}

Value aggregate(const Value& seq, const ArgumentReader& r, bool want_max) {
  const bool cs = r.get_or(0, Value(false)).truthy();
  const Value attr = r.get_or(1, Value::none());
  const List items = iterate(seq);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    const Value a = sort_key(items[i], attr, cs), b = sort_key(items[best], attr, cs);
    if (want_max ? less_than(b, a) : less_than(a, b)) best = i;
  }
  return items[best];
}

// select/reject/selectattr/rejectattr.
Value select(const Value& seq, Arguments& args, bool with_attribute, bool keep) {
  std::vector<Value> rest = args.positional;
  Value attribute;
  if (with_attribute) {
    if (rest.empty()) throw OperationError("Missing parameter for attribute name");
    attribute = rest.front();
    rest.erase(rest.begin());
  }
  std::string test;
  if (!rest.empty()) {
    if (!rest.front().is_string() || !has_test(rest.front().as_string()))
      throw OperationError("No test named " + rest.front().repr() + ".");
    test = rest.front().as_string();
    rest.erase(rest.begin());
  }
  List out;
  for (const auto& item : iterate(seq)) {
    const Value v = with_attribute ? attribute_path(item, attribute) : item;
    bool passed;
    if (test.empty()) {
      passed = v.truthy();
    } else {
      Arguments test_args{rest, args.keywords};
      passed = apply_test(test, v, test_args);
    }
    if (passed == keep) out.push_back(item);
  }
  return Value(out);
}

Value map_filter(const Value& seq, Arguments& args) {
  List out;
  const Value* attribute = nullptr;
  const Value* fallback = nullptr;
  for (const auto& [k, v] : args.keywords) {
    if (k == "attribute") attribute = &v;
    else if (k == "default") fallback = &v;
  }
  if (attribute) {
    for (const auto& item : iterate(seq)) {
      Value v = attribute_path(item, *attribute);
      out.push_back(v.is_undefined() && fallback ? *fallback : v);
    }
    return Value(out);
  }
  if (args.positional.empty()) throw OperationError("map requires a filter argument");
  if (!args.positional[0].is_string() || !has_filter(args.positional[0].as_string()))
    throw OperationError("No filter named " + args.positional[0].repr() + ".");
  const std::string filter = args.positional[0].as_string();
  for (const auto& item : iterate(seq)) {
    Arguments filter_args{std::vector<Value>(args.positional.begin() + 1, args.positional.end()), args.keywords};
    out.push_back(apply_filter(filter, item, filter_args));
  }
  return Value(out);
}

}  // namespace

std::optional<Value> higher_order_filter(const std::string& name, const Value& v, Arguments& args) {
  if (name == "map") return map_filter(v, args);
  if (name == "select" || name == "reject") return select(v, args, false, name == "select");
  if (name == "selectattr" || name == "rejectattr") return select(v, args, true, name == "selectattr");
  return std::nullopt;
}

std::optional<Value> sequence_filter(const std::string& name, const Value& v, const ArgumentReader& r) {
  if (name == "length" || name == "count") return Value(python_len(v));
  if (name == "join") {
    const std::string sep = r.get_or(0, Value("")).str();
    const Value attribute = r.get_or(1, Value::none());
    std::string out;
    bool first = true;
    for (const auto& item : iterate(v)) {
      append_checked(out, first ? "" : sep);
      append_checked(out, (attribute.is_none() ? item : attribute_path(item, attribute)).str());
      first = false;
    }
    return Value(out);
  }
  if (name == "first" || name == "last") {
    const List items = iterate(v);
    if (items.empty()) return Value::undefined(std::string("No ") + name + " item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") return Value(iterate(v));
  if (name == "reverse") {
    if (v.is_string()) {
      auto cps = utf8::decode(v.as_string());
      std::reverse(cps.begin(), cps.end());
      return Value(utf8::encode(cps));
    }
    List items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value(items);
  }
  if (name == "items") {
    if (v.is_undefined()) return Value(List{});
    if (!v.is_dict()) throw OperationError("Can only get item pairs from a mapping.");
    List out;
    for (const auto& [k, val] : v.as_dict().items) out.push_back(Value::tuple(List{k, val}));
    return Value(out);
  }
  if (name == "dictsort") {
    if (!v.is_dict()) throw OperationError("dictsort expects a mapping, got " + v.type_name());
    const bool cs = r.get_or(0, Value(false)).truthy();
    const std::string by = r.get_or(1, Value("key")).str();
    if (by != "key" && by != "value") throw OperationError("You can only sort by either \"key\" or \"value\"");
    const bool reverse = r.get_or(2, Value(false)).truthy();
    auto items = v.as_dict().items;
    std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
      charge_steps(1);
      const Value x = lowered(by == "key" ? a.first : a.second, cs), y = lowered(by == "key" ? b.first : b.second, cs);
      return reverse ? less_than(y, x) : less_than(x, y);
    });
    List out;
    for (auto& [k, val] : items) out.push_back(Value::tuple(List{k, val}));
    return Value(out);
  }
  if (name == "sort") {
    const bool reverse = r.get_or(0, Value(false)).truthy(), cs = r.get_or(1, Value(false)).truthy();
    const Value attribute = r.get_or(2, Value::none());
    List items = iterate(v);
    std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
      charge_steps(1);
      const Value x = sort_key(a, attribute, cs), y = sort_key(b, attribute, cs);
      return reverse ? less_than(y, x) : less_than(x, y);
    });
    return Value(items);
  }
  if (name == "unique") {
    const bool cs = r.get_or(0, Value(false)).truthy();
    const Value attribute = r.get_or(1, Value::none());
    List out, seen;
    for (const auto& item : iterate(v)) {
      const Value key = sort_key(item, attribute, cs);
      charge_steps(seen.size());  // quadratic: Python hashes, we compare
      if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) continue;
      seen.push_back(key);
      out.push_back(item);
    }
    return Value(out);
  }
  if (name == "min" || name == "max") return aggregate(v, r, name == "max");
  if (name == "sum") {
    const Value attribute = r.get_or(0, Value::none());
    Value total = r.get_or(1, Value(0));
    for (const auto& item : iterate(v))
      total = binary_operation("+", total, attribute.is_none() ? item : attribute_path(item, attribute));
    return total;
  }
  if (name == "batch") {
    const int64_t size = r.get(0).as_int();
    if (size <= 0) throw OperationError("batch size must be positive");
    List out, current;
    for (const auto& item : iterate(v)) {
      current.push_back(item);
      if (static_cast<int64_t>(current.size()) == size) {
        out.emplace_back(current);
        current.clear();
      }
    }
    if (!current.empty()) {
      if (r.has(1)) {
        check_list_size(size);  // filled up to the batch size
        current.resize(static_cast<size_t>(size), r.get(1));
      }
      out.emplace_back(current);
    }
    return Value(out);
  }
  return std::nullopt;
}

}  // namespace kvbench::jinja
