// The Python methods of str that the sandbox allows (strip, split, replace, find, format, ...),
// with the substring search they and the `in` operator share. Attribute and item access, which
// hands these methods out, is in access.cpp.
#include "jinja/string_methods.hpp"

#include <string.h>  // memmem

#include <algorithm>
#include <set>
#include <string_view>

#include "jinja/builtins.hpp"
#include "jinja/limits.hpp"
#include "jinja/utf8.hpp"

namespace kvbench::jinja {

// Substring search. std::string::find compares at every position, O(n·m) at worst, which a long
// needle that almost matches everywhere turns into hours; glibc's memmem is linear (two-way
// algorithm) in time and constant in space. Each search is charged a step and the bytes it
// scanned, so a loop over the matches costs the text's length once.
size_t find_in(std::string_view hay, std::string_view needle, size_t from) {
  if (from > hay.size()) return std::string::npos;
  const void* at = memmem(hay.data() + from, hay.size() - from, needle.data(), needle.size());
  const size_t found = at ? static_cast<size_t>(static_cast<const char*>(at) - hay.data()) : std::string::npos;
  charge_steps(1);
  charge_bytes(found == std::string::npos ? hay.size() - from : found + needle.size() - from);
  return found;
}

namespace {

// The last occurrence of `needle`, or npos (std::string::rfind). Short needles bound the naive
// search; long ones search the reversed strings forwards.
size_t rfind_in(std::string_view hay, std::string_view needle) {
  constexpr size_t kShortNeedle = 32;
  charge_steps(1);
  charge_bytes(hay.size());
  if (needle.size() <= kShortNeedle) return hay.rfind(needle);
  const std::string rhay(hay.rbegin(), hay.rend()), rneedle(needle.rbegin(), needle.rend());
  const size_t r = find_in(rhay, rneedle);
  return r == std::string::npos ? r : hay.size() - r - needle.size();
}

const std::string& string_arg(const Value& v, const std::string& what) {
  if (!v.is_string()) throw OperationError(what + " must be str, not " + v.type_name());
  return v.as_string();
}

// The parts of `s` between occurrences of `d`, at most `maxsplit` splits (< 0: all).
std::vector<std::string> split_on(const std::string& s, const std::string& d, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t start = 0;
  int64_t n = 0;
  for (size_t at = find_in(s, d); at != std::string::npos && (maxsplit < 0 || n < maxsplit);
       at = find_in(s, d, start), ++n) {
    check_list_size(parts.size() + 2);
    parts.push_back(s.substr(start, at - start));
    start = at + d.size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

// Python str.split / rsplit.
List split(const std::string& s, const Value& sep, int64_t maxsplit, bool from_right) {
  List out;
  if (sep.is_none() || sep.is_undefined()) {
    auto cps = utf8::decode(s);
    std::vector<std::pair<size_t, size_t>> words;  // [begin, end) in code points
    size_t i = 0;
    while (i < cps.size()) {
      while (i < cps.size() && utf8::is_space(cps[i])) ++i;
      if (i == cps.size()) break;
      size_t j = i;
      while (j < cps.size() && !utf8::is_space(cps[j])) ++j;
      check_list_size(words.size() + 1);
      words.emplace_back(i, j);
      i = j;
    }
    if (maxsplit < 0 || static_cast<size_t>(maxsplit) >= words.size()) {
      for (auto [b, e] : words) out.emplace_back(utf8::encode({cps.begin() + b, cps.begin() + e}));
      return out;
    }
    if (!from_right) {
      // Python keeps the remainder as it is, trailing whitespace included.
      for (int64_t k = 0; k < maxsplit; ++k) out.emplace_back(utf8::encode({cps.begin() + words[k].first, cps.begin() + words[k].second}));
      out.emplace_back(utf8::encode({cps.begin() + words[maxsplit].first, cps.end()}));
    } else {
      const size_t first = words.size() - static_cast<size_t>(maxsplit);
      out.emplace_back(utf8::encode({cps.begin(), cps.begin() + words[first - 1].second}));
      for (size_t k = first; k < words.size(); ++k) out.emplace_back(utf8::encode({cps.begin() + words[k].first, cps.begin() + words[k].second}));
    }
    return out;
  }
  const std::string& d = string_arg(sep, "separator");
  if (d.empty()) throw OperationError("empty separator");
  std::vector<std::string> parts;
  if (!from_right) {
    parts = split_on(s, d, maxsplit);
  } else {
    // rsplit is split of the reversed strings, the parts reversed back: one forward search per
    // part. Bytes are reversed twice, so UTF-8 survives.
    parts = split_on(std::string(s.rbegin(), s.rend()), std::string(d.rbegin(), d.rend()), maxsplit);
    for (auto& p : parts) std::reverse(p.begin(), p.end());
    std::reverse(parts.begin(), parts.end());
  }
  for (auto& p : parts) out.emplace_back(std::move(p));
  return out;
}

// Python str.replace; the result can be far larger than `s`, so every append is checked.
std::string replace(const std::string& s, const std::string& old, const std::string& with, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts `with` around every character
    auto cps = utf8::decode(s);
    int64_t n = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || n < count) {
        append_checked(out, with);
        ++n;
      }
      if (i < cps.size()) utf8::append(out, cps[i]);
    }
    return out;
  }
  size_t start = 0;
  int64_t n = 0;
  for (size_t at = find_in(s, old); at != std::string::npos && (count < 0 || n < count);
       at = find_in(s, old, start), ++n) {
    append_checked(out, std::string_view(s).substr(start, at - start));
    append_checked(out, with);
    start = at + old.size();
  }
  append_checked(out, std::string_view(s).substr(start));
  return out;
}

char32_t ascii_upper(char32_t c) { return c >= 'a' && c <= 'z' ? c - 32 : c; }
char32_t ascii_lower(char32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }
bool ascii_alpha(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string map_chars(const std::string& s, char32_t (*f)(char32_t)) {
  auto cps = utf8::decode(s);
  for (auto& c : cps) c = f(c);
  return utf8::encode(cps);
}

// Python str.title() (ASCII letters are the cased characters).
std::string title_words(const std::string& s) {
  auto cps = utf8::decode(s);
  bool previous_cased = false;
  for (auto& c : cps) {
    if (ascii_alpha(c)) {
      c = previous_cased ? ascii_lower(c) : ascii_upper(c);
      previous_cased = true;
    } else {
      previous_cased = false;
    }
  }
  return utf8::encode(cps);
}

std::string capitalize(const std::string& s) {
  auto cps = utf8::decode(s);
  for (size_t i = 0; i < cps.size(); ++i) cps[i] = i == 0 ? ascii_upper(cps[i]) : ascii_lower(cps[i]);
  return utf8::encode(cps);
}

int64_t code_point_index(const std::string& s, size_t byte_offset) {
  return static_cast<int64_t>(utf8::length(s.substr(0, byte_offset)));
}

bool affix_matches(const std::string& s, const Value& affix, bool prefix) {
  auto one = [&](const Value& a) {
    const std::string& x = string_arg(a, prefix ? "startswith first arg" : "endswith first arg");
    charge_steps(1);
    if (x.size() > s.size()) return false;
    charge_bytes(x.size());
    return prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (affix.is_list()) {
    for (const auto& a : affix.as_list())
      if (one(a)) return true;
    return false;
  }
  return one(affix);
}

// Python str.format with {} / {0} / {name} fields (no format specs or conversions).
std::string python_format(const std::string& fmt, Arguments& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '{' && i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
    } else if (c == '}' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
      out += '}';
      ++i;
    } else if (c == '{') {
      const size_t close = fmt.find('}', i);
      if (close == std::string::npos) throw OperationError("Single '{' encountered in format string");
      const std::string field = fmt.substr(i + 1, close - i - 1);
      if (field.find_first_of(":!.[") != std::string::npos)
        throw OperationError("str.format field '" + field + "' uses a format spec or conversion (not supported)");
      const Value* v = nullptr;
      if (field.empty() || std::all_of(field.begin(), field.end(), ::isdigit)) {
        if (field.size() > 9) throw OperationError("Replacement index " + field + " out of range");
        const size_t index = field.empty() ? auto_index++ : std::stoul(field);
        if (index >= args.positional.size()) throw OperationError("Replacement index " + std::to_string(index) + " out of range");
        v = &args.positional[index];
      } else {
        for (const auto& [k, val] : args.keywords)
          if (k == field) v = &val;
        if (!v) throw OperationError("KeyError: '" + field + "'");
      }
      append_checked(out, v->str());
      i = close;
    } else if (c == '}') {
      throw OperationError("Single '}' encountered in format string");
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Value string_method(const Value& self, const std::string& name) {
  static const std::set<std::string> kMethods = {
      "strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith", "upper", "lower", "title",
      "capitalize", "replace", "find", "rfind", "index", "rindex", "count", "join", "isdigit", "isalpha",
      "isalnum", "isspace", "islower", "isupper", "splitlines", "format", "removeprefix", "removesuffix"};
  if (!kMethods.count(name)) return no_attribute(self, name);
  return Value::method(self, "str." + name, [self, name](Arguments& args) -> Value {
    const std::string& s = self.as_string();
    charge_bytes(s.size());  // every method reads the string at most a few times
    const std::string fn = "str." + name;
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      ArgumentReader r(args, fn, {"chars"});
      return Value(python_strip(s, r.get_or(0, Value::none()), name != "rstrip", name != "lstrip"));
    }
    if (name == "split" || name == "rsplit") {
      ArgumentReader r(args, fn, {"sep", "maxsplit"});
      return Value(split(s, r.get_or(0, Value::none()), r.get_or(1, Value(-1)).as_int(), name == "rsplit"));
    }
    if (name == "startswith" || name == "endswith") {
      ArgumentReader r(args, fn, {"prefix"});
      return Value(affix_matches(s, r.get(0), name == "startswith"));
    }
    if (name == "upper") return Value(map_chars(s, ascii_upper));
    if (name == "lower") return Value(map_chars(s, ascii_lower));
    if (name == "title") return Value(title_words(s));
    if (name == "capitalize") return Value(capitalize(s));
    if (name == "replace") {
      ArgumentReader r(args, fn, {"old", "new", "count"});
      return Value(replace(s, string_arg(r.get(0), "replace() argument 1"), string_arg(r.get(1), "replace() argument 2"),
                           r.get_or(2, Value(-1)).as_int()));
    }
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
      ArgumentReader r(args, fn, {"sub"});
      const std::string& sub = string_arg(r.get(0), name + "() argument");
      const size_t at = name[0] == 'r' ? rfind_in(s, sub) : find_in(s, sub);
      if (at == std::string::npos) {
        if (name == "index" || name == "rindex") throw OperationError("substring not found");
        return Value(-1);
      }
      return Value(code_point_index(s, at));
    }
    if (name == "count") {
      ArgumentReader r(args, fn, {"sub"});
      const std::string& sub = string_arg(r.get(0), "count() argument");
      if (sub.empty()) return Value(static_cast<int64_t>(utf8::length(s) + 1));
      int64_t n = 0;
      for (size_t at = find_in(s, sub); at != std::string::npos; at = find_in(s, sub, at + sub.size())) ++n;
      return Value(n);
    }
    if (name == "join") {
      ArgumentReader r(args, fn, {"iterable"});
      std::string out;
      bool first = true;
      for (const auto& item : iterate(r.get(0))) {
        if (!item.is_string()) throw OperationError("sequence item: expected str instance, " + item.type_name() + " found");
        append_checked(out, first ? "" : s);
        append_checked(out, item.as_string());
        first = false;
      }
      return Value(out);
    }
    if (name == "removeprefix" || name == "removesuffix") {
      ArgumentReader r(args, fn, {"affix"});
      const std::string& a = string_arg(r.get(0), name + "() argument");
      if (name == "removeprefix") return Value(s.compare(0, a.size(), a) == 0 ? s.substr(a.size()) : s);
      return Value(a.size() <= s.size() && s.compare(s.size() - a.size(), a.size(), a) == 0 ? s.substr(0, s.size() - a.size()) : s);
    }
    if (name == "splitlines") {
      List out;
      size_t start = 0;
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\n' || s[i] == '\r') {
          check_list_size(out.size() + 1);
          out.emplace_back(s.substr(start, i - start));
          if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
          start = i + 1;
        }
      }
      if (start < s.size()) out.emplace_back(s.substr(start));
      return Value(out);
    }
    if (name == "format") return Value(python_format(s, args));
    const auto cps = utf8::decode(s);
    auto all = [&](auto pred) { return !cps.empty() && std::all_of(cps.begin(), cps.end(), pred); };
    if (name == "isdigit") return Value(all([](char32_t c) { return c >= '0' && c <= '9'; }));
    if (name == "isalpha") return Value(all([](char32_t c) { return ascii_alpha(c); }));
    if (name == "isalnum") return Value(all([](char32_t c) { return ascii_alpha(c) || (c >= '0' && c <= '9'); }));
    if (name == "isspace") return Value(all([](char32_t c) { return utf8::is_space(c); }));
    bool has_cased = false, has_lower = false, has_upper = false;
    for (char32_t c : cps) {
      has_cased |= ascii_alpha(c);
      has_lower |= c >= 'a' && c <= 'z';
      has_upper |= c >= 'A' && c <= 'Z';
    }
    if (name == "islower") return Value(has_cased && !has_upper);
    return Value(has_cased && !has_lower);  // isupper
  });
}

std::string python_strip(const std::string& s, const Value& chars, bool left, bool right) {
  auto cps = utf8::decode(s);
  std::vector<char32_t> set;
  const bool whitespace = chars.is_none() || chars.is_undefined();
  if (!whitespace) {
    set = utf8::decode(string_arg(chars, "strip arg"));
    std::sort(set.begin(), set.end());  // searched once per stripped character
  }
  auto strip_it = [&](char32_t c) {
    return whitespace ? utf8::is_space(c) : std::binary_search(set.begin(), set.end(), c);
  };
  size_t b = 0, e = cps.size();
  if (left)
    while (b < e && strip_it(cps[b])) ++b;
  if (right)
    while (e > b && strip_it(cps[e - 1])) --e;
  return utf8::encode({cps.begin() + static_cast<long>(b), cps.begin() + static_cast<long>(e)});
}

}  // namespace kvbench::jinja
