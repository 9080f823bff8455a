// Jinja2's built-in filters, with transformers' tojson (json.dumps without ASCII escaping).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "jinja/builtins.hpp"
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

// Python round(x, n): correctly rounded, ties to even (glibc printf rounds the same way).
double python_round(double x, int64_t digits) {
  if (!std::isfinite(x)) return x;
  if (digits > 300 || digits < -300) return digits > 0 ? x : 0.0 * x;
  if (digits >= 0) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(digits), x);
    return std::strtod(buf, nullptr);
  }
  const double scale = std::pow(10.0, static_cast<double>(-digits));
  return std::nearbyint(x / scale) * scale;
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

// Python int(s, base) for a stripped string: false when it is not an integer literal.
bool parse_int(const std::string& s, int64_t base, int64_t* out) {
  if (s.empty() || base < 0 || base == 1 || base > 36) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, static_cast<int>(base));
  if (end != s.c_str() + s.size()) return false;
  if (errno == ERANGE) integer_overflow();  // Python would make a big integer
  *out = v;
  return true;
}

// Python float(s) for a stripped string: out-of-range literals are ±inf or 0, as in Python.
bool parse_float(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
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

bool has_filter(const std::string& name) { return filter_parameters().count(name) > 0; }

Value apply_filter(const std::string& name, const Value& v, Arguments& args) {
  charge_steps(1);  // map applies a filter per item
  if (name == "map") return map_filter(v, args);
  if (name == "select" || name == "reject") return select(v, args, false, name == "select");
  if (name == "selectattr" || name == "rejectattr") return select(v, args, true, name == "selectattr");
  if (name == "format") {
    if (!args.keywords.empty()) throw OperationError("format filter with keyword arguments is not supported");
    return Value(printf_format(v.str(), args.positional));
  }
  ArgumentReader r(args, name, filter_parameters().at(name));
  if (name == "default" || name == "d") {
    const bool boolean = r.get_or(1, Value(false)).truthy();
    if (v.is_undefined() || (boolean && !v.truthy())) return r.get_or(0, Value(""));
    return v;
  }
  if (name == "length" || name == "count") return Value(python_len(v));
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
  if (name == "abs") {
    if (v.is_float()) return Value(std::fabs(v.as_number()));
    if (v.is_number()) return Value(v.as_int() < 0 ? negate(v.as_int()) : v.as_int());
    if (v.is_undefined()) v.fail_undefined();
    throw OperationError("bad operand type for abs(): '" + v.type_name() + "'");
  }
  if (name == "round") {
    const int64_t precision = r.get_or(0, Value(0)).as_int();
    const std::string method = r.get_or(1, Value("common")).str();
    if (method != "common" && method != "ceil" && method != "floor")
      throw OperationError("method must be common, ceil or floor");
    if (v.is_undefined()) v.fail_undefined();
    if (!v.is_number()) throw OperationError("type " + v.type_name() + " doesn't define __round__ method");
    if (method == "common") {
      if (!v.is_float()) return v.is_bool() ? Value(v.as_int()) : v;
      return Value(python_round(v.as_number(), precision));
    }
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = v.as_number() * scale;
    return Value((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
  }
  if (name == "int") {
    const Value fallback = r.get_or(0, Value(0));
    const int64_t base = r.get_or(1, Value(10)).as_int();
    // Jinja2: int(value[, base]), else int(float(value)), else the default; only ValueError
    // (nan) falls back, an infinity raises.
    if (v.is_bool() || v.is_int()) return Value(v.as_int());
    double d = NAN;
    if (v.is_float()) d = v.as_number();
    if (v.is_string()) {
      const std::string s = python_strip(v.as_string(), Value::none(), true, true);
      int64_t i;
      if (parse_int(s, base, &i)) return Value(i);
      if (!parse_float(s, &d)) d = NAN;
    }
    return std::isnan(d) ? fallback : Value(float_to_int(d));
  }
  if (name == "float") {
    const Value fallback = r.get_or(0, Value(0.0));
    if (v.is_number()) return Value(v.as_number());
    double d;
    if (v.is_string() && parse_float(python_strip(v.as_string(), Value::none(), true, true), &d)) return Value(d);
    return fallback;
  }
  if (name == "indent") {
    const Value width = r.get_or(0, Value(4));
    return Value(indent_text(v.str(), width, r.get_or(1, Value(false)).truthy(), r.get_or(2, Value(false)).truthy()));
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
