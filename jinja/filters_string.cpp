// The string filters of Jinja2: format (printf-style), string, safe, escape, trim, upper, lower,
// capitalize, title, replace, center, wordcount, indent. Dispatched from filters.cpp.
#include <algorithm>
#include <cstdio>
#include <string_view>

#include "jinja/builtins.hpp"
#include "jinja/filter_families.hpp"
#include "jinja/limits.hpp"
#include "jinja/utf8.hpp"

namespace kvbench::jinja {
namespace {

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string printf_format(const std::string& fmt, const std::vector<Value>& args) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];  // at most the format's own size
      continue;
    }
    if (i + 1 >= fmt.size()) throw OperationError("incomplete format");
    const char spec = fmt[++i];
    if (spec == '%') {
      out += '%';
      continue;
    }
    if (next >= args.size()) throw OperationError("not enough arguments for format string");
    const Value& v = args[next++];
    if (spec == 's') {
      append_checked(out, v.str());
    } else if (spec == 'r') {
      append_checked(out, v.repr());
    } else if (spec == 'd' || spec == 'i') {
      if (!v.is_number()) throw OperationError("%d format: a real number is required, not " + v.type_name());
      out += std::to_string(v.is_float() ? float_to_int(v.as_number()) : v.as_int());
    } else if (spec == 'f') {
      if (!v.is_number()) throw OperationError("must be real number, not " + v.type_name());
      char buf[64];
      std::snprintf(buf, sizeof buf, "%f", v.as_number());
      out += buf;
    } else {
      throw OperationError(std::string("unsupported format character '") + spec + "'");
    }
  }
  if (next < args.size()) throw OperationError("not all arguments converted during string formatting");
  return out;
}

// Jinja2's indent: the pad (`width` spaces, or the string itself) after every newline, before
// empty lines only when `blank`, before the first line only when `first`. Every append is
// checked: the pad is repeated once per line.
std::string indent_text(const std::string& text, const Value& width, bool first, bool blank) {
  std::string pad;
  if (width.is_string()) {
    pad = width.as_string();
  } else {
    if (!width.is_int() && !width.is_bool())
      throw OperationError("can't multiply sequence by non-int of type '" + width.type_name() + "'");
    const int64_t n = std::max<int64_t>(0, width.as_int());
    check_string_size(n);
    pad.assign(static_cast<size_t>(n), ' ');
  }
  std::string rv;
  if (first) append_checked(rv, pad);
  const std::string s = text + "\n";
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\n' && s[i] != '\r') continue;
    const std::string_view line(s.data() + start, i - start);
    if (start > 0) {
      rv += '\n';
      if (blank || !line.empty()) append_checked(rv, pad);
    }
    append_checked(rv, line);
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
    start = i + 1;
  }
  return rv;
}

}  // namespace

Value format_filter(const Value& v, Arguments& args) {
  if (!args.keywords.empty()) throw OperationError("format filter with keyword arguments is not supported");
  return Value(printf_format(v.str(), args.positional));
}

std::optional<Value> string_filter(const std::string& name, const Value& v, const ArgumentReader& r) {
  if (name == "string") return Value(v.str());
  if (name == "safe") return v;
  if (name == "e" || name == "escape" || name == "forceescape") return Value(html_escape(v.str()));
  if (name == "trim") return Value(python_strip(v.str(), r.get_or(0, Value::none()), true, true));
  if (name == "upper" || name == "lower" || name == "capitalize") {
    Arguments none;
    Value method = get_attribute(Value(v.str()), name);
    return method.as_function().call(none);
  }
  if (name == "title") {
    auto cps = utf8::decode(v.str());
    bool word_start = true;
    for (auto& c : cps) {
      const bool separator = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || utf8::is_space(c);
      if (separator) {
        word_start = true;
        continue;
      }
      if (word_start) {
        if (c >= 'a' && c <= 'z') c -= 32;
      } else if (c >= 'A' && c <= 'Z') {
        c += 32;
      }
      word_start = false;
    }
    return Value(utf8::encode(cps));
  }
  if (name == "replace") {
    Arguments method_args{{r.get(0), r.get(1)}, {}};
    if (r.has(2)) method_args.positional.push_back(r.get(2));
    return get_attribute(Value(v.str()), "replace").as_function().call(method_args);
  }
  if (name == "center") {
    const int64_t width = integer_argument(r.get_or(0, Value(80)));
    const std::string s = v.str();
    const int64_t n = static_cast<int64_t>(utf8::length(s));
    if (n >= width) return Value(s);
    const int64_t total = width - n, left = total / 2 + (total & width & 1);
    check_string_size(uint64_t{s.size()} + static_cast<uint64_t>(total));
    return Value(std::string(static_cast<size_t>(left), ' ') + s + std::string(static_cast<size_t>(total - left), ' '));
  }
  if (name == "wordcount") {
    int64_t words = 0;
    bool in_word = false;
    for (char32_t c : utf8::decode(v.str())) {
      const bool w = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
      if (w && !in_word) ++words;
      in_word = w;
    }
    return Value(words);
  }
  if (name == "indent") {
    const Value width = r.get_or(0, Value(4));
    return Value(indent_text(v.str(), width, r.get_or(1, Value(false)).truthy(), r.get_or(2, Value(false)).truthy()));
  }
  return std::nullopt;
}

}  // namespace kvbench::jinja
