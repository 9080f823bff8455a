// Python's json.dumps with ensure_ascii=False, as transformers' tojson filter calls it.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "jinja/value.hpp"

namespace kvbench::jinja {
namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[16];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
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

struct Dumper {
  int indent;
  std::string item_sep, key_sep;
  bool sort_keys;

  void newline(std::string& out, int level) const {
    out += '\n';
    out.append(static_cast<size_t>(indent * level), ' ');
  }

  void dump(const Value& v, std::string& out, int level) const {
    switch (v.kind()) {
      case Value::Kind::kNone: out += "null"; return;
      case Value::Kind::kBool:
      case Value::Kind::kInt:
      case Value::Kind::kFloat: out += number(v); return;
      case Value::Kind::kString: out += quote(v.as_string()); return;
      case Value::Kind::kList: {
        const List& list = v.as_list();
        if (list.empty()) {
          out += "[]";
          return;
        }
        out += '[';
        for (size_t i = 0; i < list.size(); ++i) {
          if (i) out += item_sep;
          if (indent >= 0) newline(out, level + 1);
          dump(list[i], out, level + 1);
        }
        if (indent >= 0) newline(out, level);
        out += ']';
        return;
      }
      case Value::Kind::kDict: {
        std::vector<std::pair<std::string, const Value*>> items;
        for (const auto& [k, val] : v.as_dict().items) items.emplace_back(key_string(k), &val);
        if (sort_keys)
          std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        if (items.empty()) {
          out += "{}";
          return;
        }
        out += '{';
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += item_sep;
          if (indent >= 0) newline(out, level + 1);
          out += quote(items[i].first) + key_sep;
          dump(*items[i].second, out, level + 1);
        }
        if (indent >= 0) newline(out, level);
        out += '}';
        return;
      }
      default: throw OperationError("Object of type " + v.type_name() + " is not JSON serializable");
    }
  }
};

}  // namespace

std::string json_dumps(const Value& value, int indent, const std::pair<std::string, std::string>* separators,
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
