// Jinja2's built-in filters: their parameters, and apply_filter, which hands a filter to its family
// (filters_string.cpp, filters_sequence.cpp, filters_number.cpp). Here too the filters of no
// family: default, attr, and transformers' tojson (json.dumps without ASCII escaping).
#include <algorithm>
#include <cstdio>
#include <map>

#include "jinja/builtins.hpp"
#include "jinja/filter_families.hpp"
#include "jinja/limits.hpp"
#include "jinja/utf8.hpp"

namespace kvbench::jinja {
namespace {

const std::map<std::string, std::vector<std::string>>& filter_parameters() {
  static const std::map<std::string, std::vector<std::string>> params = {
      {"abs", {}}, {"attr", {"name"}}, {"batch", {"linecount", "fill_with"}}, {"capitalize", {}},
      {"center", {"width"}}, {"count", {}}, {"d", {"default_value", "boolean"}},
      {"default", {"default_value", "boolean"}}, {"dictsort", {"case_sensitive", "by", "reverse"}}, {"e", {}},
      {"escape", {}}, {"first", {}}, {"float", {"default"}}, {"forceescape", {}}, {"format", {}},
      {"indent", {"width", "first", "blank"}}, {"int", {"default", "base"}}, {"items", {}},
      {"join", {"d", "attribute"}}, {"last", {}}, {"length", {}}, {"list", {}}, {"lower", {}}, {"map", {}},
      {"max", {"case_sensitive", "attribute"}}, {"min", {"case_sensitive", "attribute"}}, {"reject", {}},
      {"rejectattr", {}}, {"replace", {"old", "new", "count"}}, {"reverse", {}},
      {"round", {"precision", "method"}}, {"safe", {}}, {"select", {}}, {"selectattr", {}},
      {"sort", {"reverse", "case_sensitive", "attribute"}}, {"string", {}}, {"sum", {"attribute", "start"}},
      {"title", {}}, {"tojson", {"ensure_ascii", "indent", "separators", "sort_keys"}}, {"trim", {"chars"}},
      {"unique", {"case_sensitive", "attribute"}}, {"upper", {}}, {"wordcount", {}}};
  return params;
}

std::string ascii_escape_json(const std::string& s) {
  std::string out;
  for (char32_t cp : utf8::decode(s)) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
      continue;
    }
    auto unit = [&](unsigned u) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    };
    if (cp >= 0x10000) {
      const unsigned v = static_cast<unsigned>(cp) - 0x10000;
      unit(0xD800 + (v >> 10));
      unit(0xDC00 + (v & 0x3FF));
    } else {
      unit(static_cast<unsigned>(cp));
    }
  }
  return out;
}

}  // namespace

bool has_filter(const std::string& name) { return filter_parameters().count(name) > 0; }

Value apply_filter(const std::string& name, const Value& v, Arguments& args) {
  charge_steps(1);  // map applies a filter per item
  if (auto out = higher_order_filter(name, v, args)) return std::move(*out);
  if (name == "format") return format_filter(v, args);
  ArgumentReader r(args, name, filter_parameters().at(name));
  if (name == "default" || name == "d") {
    const bool boolean = r.get_or(1, Value(false)).truthy();
    if (v.is_undefined() || (boolean && !v.truthy())) return r.get_or(0, Value(""));
    return v;
  }
  if (auto out = string_filter(name, v, r)) return std::move(*out);
  if (auto out = sequence_filter(name, v, r)) return std::move(*out);
  if (auto out = number_filter(name, v, r)) return std::move(*out);
  if (name == "attr") return get_attribute(v, r.get(0).str());
  if (name == "tojson") {
    const bool ensure_ascii = r.get_or(0, Value(false)).truthy();
    const Value indent = r.get_or(1, Value::none());
    const Value separators = r.get_or(2, Value::none());
    const bool sort_keys = r.get_or(3, Value(false)).truthy();
    if (!indent.is_none() && !indent.is_int()) throw OperationError("tojson indent must be an integer or None");
    std::pair<std::string, std::string> seps;
    if (!separators.is_none()) {
      if (!separators.is_list() || separators.as_list().size() != 2 || !separators.as_list()[0].is_string() ||
          !separators.as_list()[1].is_string())
        throw OperationError("tojson separators must be a pair of strings");
      seps = {separators.as_list()[0].as_string(), separators.as_list()[1].as_string()};
    }
    std::string out = json_dumps(v, indent.is_none() ? -1 : std::max<int64_t>(0, indent.as_int()),
                                 separators.is_none() ? nullptr : &seps, sort_keys);
    return Value(ensure_ascii ? ascii_escape_json(out) : out);
  }
  throw OperationError("filter '" + name + "' is not implemented");
}

}  // namespace kvbench::jinja