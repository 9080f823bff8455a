// Python's json.dumps with ensure_ascii=False, as transformers' tojson filter calls it.
#include <algorithm>
#include <cmath>

#include "jinja/limits.hpp"
#include "jinja/value.hpp"

namespace kvbench::jinja {
namespace {

// A JSON string literal. Strings can be megabytes long: runs of bytes that need no escape are
// copied at once.
std::string quote(const std::string& s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  size_t run = 0;  // start of the bytes not copied yet
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s, run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default: {
        static const char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
      }
    }
  }
  out.append(s, run, std::string::npos);
  return out + "\"";
}

std::string number(const Value& v) {
  if (v.is_bool()) return v.as_bool() ? "true" : "false";
  if (v.is_int()) return std::to_string(v.as_int());
  const double x = v.as_number();
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  return float_repr(x);
}

std::string key_string(const Value& k) {
  if (k.is_string()) return k.as_string();
  if (k.is_none()) return "null";
  if (k.is_number()) return number(k);
  throw OperationError("keys must be str, int, float, bool or None, not " + k.type_name());
}

// Every append is checked against the string limit: separators and the indent are the
// template's, and a list can hold the same big value many times, so the output can be far
// larger than the value.
struct Dumper {
  int64_t indent;
  std::string item_sep, key_sep;
  bool sort_keys;

  void newline(std::string& out, int level) const {
    // The indent is checked only here, as Python uses it only between items.
    check_string_size(uint64_t{out.size()} + 1 + std::min<uint64_t>(indent, kMaxStringBytes + 1) * level);
    out += '\n';
    out.append(static_cast<size_t>(indent * level), ' ');
  }

  // Python's layout of a list or dict: `open`, items separated by item_sep, each on its own
  // indented line when indenting, `close`.
  template <typename Items, typename DumpItem>
  void container(const Items& items, std::string& out, int level, const char* open, const char* close,
                 DumpItem dump_item) const {
    if (items.empty()) {
      append_checked(out, std::string(open) + close);
      return;
    }
    append_checked(out, open);
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) append_checked(out, item_sep);
      if (indent >= 0) newline(out, level + 1);
      dump_item(items[i]);
    }
    if (indent >= 0) newline(out, level);
    append_checked(out, close);
  }

  void dump(const Value& v, std::string& out, int level) const {
    switch (v.kind()) {
      case Value::Kind::kNone: append_checked(out, "null"); return;
      case Value::Kind::kBool:
      case Value::Kind::kInt:
      case Value::Kind::kFloat: append_checked(out, number(v)); return;
      case Value::Kind::kString: append_checked(out, quote(v.as_string())); return;
      case Value::Kind::kList: {
        WalkLevel walk("print");
        charge_items(v.as_list().size());
        container(v.as_list(), out, level, "[", "]", [&](const Value& item) { dump(item, out, level + 1); });
        return;
      }
      case Value::Kind::kDict: {
        WalkLevel walk("print");
        charge_items(v.as_dict().items.size());
        std::vector<std::pair<std::string, const Value*>> items;
        for (const auto& [k, val] : v.as_dict().items) items.emplace_back(key_string(k), &val);
        if (sort_keys)
          std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        container(items, out, level, "{", "}", [&](const auto& item) {
          append_checked(out, quote(item.first) + key_sep);
          dump(*item.second, out, level + 1);
        });
        return;
      }
      default: throw OperationError("Object of type " + v.type_name() + " is not JSON serializable");
    }
  }
};

}  // namespace

std::string json_dumps(const Value& value, int64_t indent, const std::pair<std::string, std::string>* separators,
                       bool sort_keys) {
  Dumper d{indent, indent >= 0 ? "," : ", ", ": ", sort_keys};
  if (separators) {
    d.item_sep = separators->first;
    d.key_sep = separators->second;
  }
  std::string out;
  d.dump(value, out, 0);
  return out;
}

}  // namespace kvbench::jinja
