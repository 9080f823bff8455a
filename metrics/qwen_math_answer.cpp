#include "metrics/qwen_math_answer.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <vector>

#include "metrics/python_str.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics::qwen_math {

namespace {

using metrics::python_replace;

// parser.py's unit_texts (units mainly from MathQA), each also with an "s"; used as regular
// expressions as the reference does, so '.' is any character.
const std::vector<std::u32string>& unit_patterns() {
  static const std::vector<std::u32string> units = [] {
    const std::vector<std::string> base = {
    "east", "degree", "mph", "kmph", "ft", "m sqaure", " m east", "sq m", "deg", "mile", "q .", "monkey", "prime",
    "ratio", "profit of rs", "rd", "o", "gm", "p . m", "lb", "tile", "per", "dm", "lt", "gain", "ab", "way", "west",
    "a .", "b .", "c .", "d .", "e .", "f .", "g .", "h .", "t", "a", "h", "no change", "men", "soldier", "pie",
    "bc", "excess", "st", "inches", "noon", "percent", "by", "gal", "kmh", "c", "acre", "rise", "a . m", "th",
    "π r 2", "sq", "mark", "l", "toy", "coin", "sq . m", "gallon", "° f", "profit", "minw", "yr", "women", "feet",
    "am", "pm", "hr", "cu cm", "square", "v â € ™", "are", "rupee", "rounds", "cubic", "cc", "mtr", "s", "ohm",
    "number", "kmph", "day", "hour", "minute", "min", "second", "man", "woman", "sec", "cube", "mt", "sq inch", "mp",
    "∏ cm ³", "hectare", "more", "sec", "unit", "cu . m", "cm 2", "rs .", "rs", "kg", "g", "month", "km", "m", "cm",
    "mm", "apple", "liter", "loss", "yard", "pure", "year", "increase", "decrease", "d", "less", "Surface", "litre",
    "pi sq m", "s .", "metre", "meter", "inch",
    };
    std::vector<std::u32string> all;
    for (const std::string& u : base) all.push_back(utf8_decode(u));
    for (const std::string& u : base) all.push_back(utf8_decode(u + "s"));
    return all;
  }();
  return units;
}

bool unit_char_matches(char32_t pattern, char32_t c) { return pattern == U'.' ? c != U'\n' : pattern == c; }

bool unit_at(const std::u32string& s, size_t i, const std::u32string& unit) {
  if (i + unit.size() > s.size()) return false;
  for (size_t k = 0; k < unit.size(); ++k)
    if (!unit_char_matches(unit[k], s[i + k])) return false;
  return true;
}

// re.sub(r"(^|\W)" + unit + r"($|\W)", r"\1\2", s): the unit between the start or a non-word
// character and the end or a non-word character is removed, the separators kept.
std::u32string remove_unit(const std::u32string& s, const std::u32string& unit) {
  std::u32string out;
  size_t i = 0;
  while (i <= s.size()) {
    // The alternatives in the order re tries them: '^' (only at 0), then one \W character.
    std::optional<std::pair<size_t, size_t>> match;  // (unit start, match end)
    for (int alt = 0; alt < 2 && !match; ++alt) {
      size_t start = i;
      if (alt == 0) {
        if (i != 0) continue;
      } else {
        if (i >= s.size() || python_re_word(s[i])) continue;
        start = i + 1;
      }
      if (!unit_at(s, start, unit)) continue;
      const size_t after = start + unit.size();
      if (after == s.size()) match = std::make_pair(start, after);
      else if (!python_re_word(s[after])) match = std::make_pair(start, after + 1);
    }
    if (!match) {
      if (i < s.size()) out += s[i];
      ++i;
      continue;
    }
    const auto [start, end] = *match;
    out += s.substr(i, start - i);                                            // \1
    const size_t after = start + unit.size();
    if (end > after) out += s[after];                                         // \2
    i = end;
    if (i == s.size()) break;
  }
  return out;
}

// re.sub(open + ".*?" + close, replace(content), s) for a literal open and a one-character close:
// each `open` up to the first `close` after it; an `open` with no close after it stays.
std::string replace_lazy(const std::string& s, const std::string& open, char close,
                         const std::function<std::string(const std::string&)>& replace) {
  std::string out;
  size_t i = 0;
  while (true) {
    const size_t at = s.find(open, i);
    if (at == std::string::npos) break;
    const size_t end = s.find(close, at + open.size());
    if (end == std::string::npos || s.find('\n', at + open.size()) < end) {  // '.' stops at a newline
      out += s.substr(i, at + 1 - i);
      i = at + 1;
      continue;
    }
    out += s.substr(i, at - i) + replace(s.substr(at + open.size(), end - at - open.size()));
    i = end + 1;
  }
  return out + s.substr(i);
}

// re.sub(r"(\d+)\.0*([^\d])", r"\1\2", s), then re.sub(r"(\d+)\.0*$", r"\1", s): "2.00x" -> "2x",
// "5.0" -> "5".
std::u32string drop_zero_decimals(const std::u32string& s, bool at_end) {
  std::u32string out;
  size_t i = 0;
  while (i < s.size()) {
    if (!python_re_digit(s[i])) { out += s[i++]; continue; }
    size_t run = i;
    while (run < s.size() && python_re_digit(s[run])) ++run;
    bool matched = false;
    if (run < s.size() && s[run] == U'.') {
      size_t z = run + 1;
      while (z < s.size() && s[z] == U'0') ++z;
      if (!at_end && z < s.size() && !python_re_digit(s[z])) {
        out += s.substr(i, run - i);
        out += s[z];
        i = z + 1;
        matched = true;
      } else if (at_end && z == s.size()) {
        out += s.substr(i, run - i);
        i = z;
        matched = true;
      }
    }
    if (!matched) {
      out += s.substr(i, run - i);
      i = run;
    }
  }
  return out;
}

// _fix_sqrt: re.sub(r"\\sqrt(\w+)", r"\\sqrt{\1}", s).
std::u32string fix_sqrt(const std::u32string& s) {
  static const std::u32string sqrt = U"\\sqrt";
  std::u32string out;
  size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, sqrt.size(), sqrt) == 0 && i + sqrt.size() < s.size() && python_re_word(s[i + sqrt.size()])) {
      size_t end = i + sqrt.size();
      while (end < s.size() && python_re_word(s[end])) ++end;
      out += sqrt + U"{" + s.substr(i + sqrt.size(), end - i - sqrt.size()) + U"}";
      i = end;
      continue;
    }
    out += s[i++];
  }
  return out;
}

// _fix_fracs: \frac12 -> \frac{1}{2}, \frac1{72} -> \frac{1}{72}; the text unchanged when a
// \frac has fewer than two characters after it.
std::u32string fix_fracs(const std::u32string& s) {
  static const std::u32string frac = U"\\frac";
  std::vector<std::u32string> parts;
  size_t from = 0;
  while (true) {
    const size_t at = s.find(frac, from);
    if (at == std::u32string::npos) { parts.push_back(s.substr(from)); break; }
    parts.push_back(s.substr(from, at - from));
    from = at + frac.size();
  }
  std::u32string out = parts[0];
  for (size_t k = 1; k < parts.size(); ++k) {
    const std::u32string& sub = parts[k];
    out += frac;
    if (!sub.empty() && sub[0] == U'{') { out += sub; continue; }
    if (sub.size() < 2) return s;
    const std::u32string a(1, sub[0]), b(1, sub[1]), rest = sub.substr(2);
    out += b != U"{" ? U"{" + a + U"}{" + b + U"}" + rest : U"{" + a + U"}" + b + rest;
  }
  return out;
}

// A Python int() that prints back as itself: -?(0|[1-9][0-9]*).
bool canonical_int(const std::string& s) {
  size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  if (s[i] == '0') return i + 1 == s.size();
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// _fix_a_slash_b: "a/b" with integer sides (or sides containing "sqrt") -> \frac{a}{b}.
std::string fix_a_slash_b(const std::string& s) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos || s.find('/', slash + 1) != std::string::npos) return s;
  const std::string a = s.substr(0, slash), b = s.substr(slash + 1);
  const bool a_ok = a.find("sqrt") != std::string::npos || canonical_int(a);
  const bool b_ok = b.find("sqrt") != std::string::npos || canonical_int(b);
  return a_ok && b_ok ? "\\frac{" + a + "}{" + b + "}" : s;
}

std::string rstrip_chars(std::string s, char c) {
  while (!s.empty() && s.back() == c) s.pop_back();
  return s;
}

// Python's len(s.split("=")) == 2 and len(parts[0]) <= 2 -> parts[1].
std::string drop_short_lhs(const std::string& s) {
  const size_t eq = s.find('=');
  if (eq == std::string::npos || s.find('=', eq + 1) != std::string::npos) return s;
  return utf8_decode(s.substr(0, eq)).size() <= 2 ? s.substr(eq + 1) : s;
}

}  // namespace

std::optional<std::string> word_to_num(const std::string& text) {
  static const std::map<std::string, int64_t> numbers = {
      {"zero", 0}, {"one", 1}, {"two", 2}, {"three", 3}, {"four", 4}, {"five", 5}, {"six", 6}, {"seven", 7},
      {"eight", 8}, {"nine", 9}, {"ten", 10}, {"eleven", 11}, {"twelve", 12}, {"thirteen", 13}, {"fourteen", 14},
      {"fifteen", 15}, {"sixteen", 16}, {"seventeen", 17}, {"eighteen", 18}, {"nineteen", 19}, {"twenty", 20},
      {"thirty", 30}, {"forty", 40}, {"fifty", 50}, {"sixty", 60}, {"seventy", 70}, {"eighty", 80}, {"ninety", 90},
      {"hundred", 100}, {"thousand", 1000}, {"million", 1000000}, {"billion", 1000000000}};
  const std::string sentence = python_lower(python_replace(text, "-", " "));
  // str.isdigit() then int(): ASCII digits print back without leading zeros (other Unicode digits
  // are left as they are here; Python would convert its decimal ones).
  bool all_digits = !sentence.empty();
  for (char c : sentence) all_digits = all_digits && c >= '0' && c <= '9';
  if (all_digits) {
    const size_t nz = sentence.find_first_not_of('0');
    return nz == std::string::npos ? std::string("0") : sentence.substr(nz);
  }
  std::vector<std::string> clean;
  for (const std::string& w : python_split_ws(sentence))
    if (numbers.count(w) || w == "point") clean.push_back(w);
  if (clean.empty()) return std::nullopt;
  auto count = [&](const std::string& w) { return std::count(clean.begin(), clean.end(), w); };
  if (count("thousand") > 1 || count("million") > 1 || count("billion") > 1 || count("point") > 1) return std::nullopt;
  std::vector<std::string> decimals;
  if (count("point") == 1) {
    const auto p = std::find(clean.begin(), clean.end(), "point");
    decimals.assign(p + 1, clean.end());
    clean.erase(p, clean.end());
  }
  auto index_of = [&](const std::string& w) -> int64_t {
    const auto it = std::find(clean.begin(), clean.end(), w);
    return it == clean.end() ? -1 : it - clean.begin();
  };
  const int64_t billion = index_of("billion"), million = index_of("million"), thousand = index_of("thousand");
  if ((thousand > -1 && (thousand < million || thousand < billion)) || (million > -1 && million < billion)) return std::nullopt;
  // number_formation: raises (IndexError) on an empty slice.
  auto formation = [&](int64_t from, int64_t to) -> std::optional<int64_t> {
    if (to <= from) return std::nullopt;
    std::vector<int64_t> v;
    for (int64_t k = from; k < to; ++k) v.push_back(numbers.at(clean[k]));
    if (v.size() == 4) return v[0] * v[1] + v[2] + v[3];
    if (v.size() == 3) return v[0] * v[1] + v[2];
    if (v.size() == 2) return std::count(v.begin(), v.end(), 100) ? v[0] * v[1] : v[0] + v[1];
    return v[0];
  };
  int64_t total = 0;
  const auto n = static_cast<int64_t>(clean.size());
  if (n == 1) {
    total += numbers.at(clean[0]);
  } else if (n > 1) {
    if (billion > -1) {
      auto m = formation(0, billion);
      if (!m) return std::nullopt;
      total += *m * 1000000000;
    }
    if (million > -1) {
      auto m = formation(billion > -1 ? billion + 1 : 0, million);
      if (!m) return std::nullopt;
      total += *m * 1000000;
    }
    if (thousand > -1) {
      auto m = formation(million > -1 ? million + 1 : billion > -1 ? billion + 1 : 0, thousand);
      if (!m) return std::nullopt;
      total += *m * 1000;
    }
    std::optional<int64_t> hundreds = 0;
    if (thousand > -1 && thousand != n - 1) hundreds = formation(thousand + 1, n);
    else if (million > -1 && million != n - 1) hundreds = formation(million + 1, n);
    else if (billion > -1 && billion != n - 1) hundreds = formation(billion + 1, n);
    else if (thousand == -1 && million == -1 && billion == -1) hundreds = formation(0, n);
    if (!hundreds) return std::nullopt;
    total += *hundreds;
  }
  if (decimals.empty()) return python_int_str(total);
  // get_decimal_sum: float("0." + digits), or 0 when a word is not a digit word.
  std::string digits;
  for (const std::string& w : decimals) {
    const int64_t v = numbers.at(w == "point" ? "zero" : w);
    if (w == "point" || v > 9) return python_int_str(total);
    digits += static_cast<char>('0' + v);
  }
  return python_float_str(static_cast<double>(total) + std::stod("0." + digits));
}

std::string strip_string(const std::string& text, bool skip_unit) {
  std::string s = python_strip(text);
  s = python_replace(s, "\n", "");
  s = rstrip_chars(s, '.');
  s = python_replace(s, "\\!", "");
  s = replace_lazy(s, "\\begin{array}{", '}', [](const std::string&) { return std::string("\\begin{pmatrix}"); });
  s = python_replace(s, "\\end{array}", "\\end{pmatrix}");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"bmatrix", "pmatrix"}, {"tfrac", "frac"}, {"dfrac", "frac"}, {"\\neq", "\\ne"}, {"\\leq", "\\le"},
           {"\\geq", "\\ge"}, {"\\left", ""}, {"\\right", ""}, {"\\{", "{"}, {"\\}", "}"}})
    s = python_replace(s, from, to);
  // re.sub(r"\\text{.*?}$", "", s).strip(): from the first "\text{" when the text ends with '}'.
  const size_t text_at = s.find("\\text{");
  if (text_at != std::string::npos && s.size() > text_at + 6 && s.back() == '}') {
    const std::string cut = python_strip(s.substr(0, text_at));
    if (!cut.empty() && cut != s) s = cut;
  }
  if (!skip_unit) {
    std::u32string u = utf8_decode(s);
    for (int round = 0; round < 2; ++round)
      for (const std::u32string& unit : unit_patterns()) {
        std::u32string removed = remove_unit(u, unit);
        if (!removed.empty()) u = std::move(removed);
      }
    s = utf8_encode(u);
  }
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"^{\\circ}", ""}, {"^\\circ", ""}, {"\\$", ""}, {"$", ""}, {"\\(", ""}, {"\\)", ""}})
    s = python_replace(s, from, to);
  if (std::optional<std::string> n = word_to_num(s)) s = *n;
  s = replace_lazy(s, "\\text{", '}', [](const std::string& content) { return content; });
  for (const char* key : {"x=", "y=", "z=", "x\\in", "y\\in", "z\\in", "x\\to", "y\\to", "z\\to"}) s = python_replace(s, key, "");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\\emptyset", "{}"}, {"(-\\infty,\\infty)", "\\mathbb{R}"}, {"\\%", ""}, {"%", ""}, {" .", " 0."},
           {"{.", "{0."}, {"infinity", "\\infty"}})
    s = python_replace(s, from, to);
  if (s.find("\\infty") == std::string::npos) s = python_replace(s, "inf", "\\infty");
  s = python_replace(s, "+\\inity", "\\infty");
  s = python_replace(s, "and", "");
  s = python_replace(s, "\\mathbf", "");
  s = replace_lazy(s, "\\mbox{", '}', [](const std::string&) { return std::string(); });
  if (s.find('j') != std::string::npos && s.find('i') == std::string::npos) s = python_replace(s, "j", "i");
  s = utf8_encode(drop_zero_decimals(drop_zero_decimals(utf8_decode(s), false), true));
  if (s.empty()) return s;
  if (s[0] == '.') s = "0" + s;
  s = drop_short_lhs(s);
  s = utf8_encode(fix_sqrt(utf8_decode(s)));
  s = python_replace(s, " ", "");
  s = utf8_encode(fix_fracs(utf8_decode(s)));
  return fix_a_slash_b(s);
}

namespace {

// The text after the last "boxed": its balanced {...} content, or up to the first '$'.
std::string after_last_boxed(const std::string& text) {
  const size_t at = text.rfind("boxed");
  const std::string ans = text.substr(at + 5);
  if (ans.empty()) return "";
  if (ans[0] != '{') return python_strip(ans.substr(0, ans.find('$')));
  int depth = 1;
  std::string a;
  for (size_t i = 1; i < ans.size(); ++i) {
    const char c = ans[i];
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) break;
    a += c;
  }
  return a;
}

// re.findall(r"-?\d*\.?\d+", s)[-1]: the last number ("" when none).
std::string last_number(const std::u32string& s) {
  std::u32string last;
  size_t i = 0;
  auto digits_from = [&](size_t j) {
    while (j < s.size() && python_re_digit(s[j])) ++j;
    return j;
  };
  while (i < s.size()) {
    size_t j = i + (s[i] == U'-' ? 1 : 0);
    const size_t run = digits_from(j);
    size_t end = 0;
    if (run < s.size() && s[run] == U'.' && digits_from(run + 1) > run + 1) end = digits_from(run + 1);
    else if (run > j) end = run;
    if (end == 0 && j > i) {  // '-' not followed by a number: no match starting here
      ++i;
      continue;
    }
    if (end == 0) { ++i; continue; }
    last = s.substr(i, end - i);
    i = end;
  }
  return utf8_encode(last);
}

}  // namespace

std::string extract_answer(const std::string& output) {
  const std::string text = python_replace(output, "\u043a\u0438", "");
  std::string pred;
  if (text.find("final answer is $") != std::string::npos && text.find("$. I hope") != std::string::npos) {
    const std::string tail = text.substr(text.find("final answer is $") + 17);
    pred = python_strip(tail.substr(0, tail.find("$. I hope")));
  } else if (text.find("boxed") != std::string::npos) {
    const size_t at = text.rfind("boxed");
    if (at + 5 == text.size()) return "";
    pred = after_last_boxed(text);
  } else if (text.find("he answer is") != std::string::npos) {
    pred = python_strip(text.substr(text.rfind("he answer is") + 12));
  } else if (text.find("final answer is") != std::string::npos) {
    pred = python_strip(text.substr(text.rfind("final answer is") + 15));
  } else if (text.find("答案是") != std::string::npos) {
    const size_t first = text.find("答案是") + std::string("答案是").size();
    const size_t next = text.find("答案是", first);  // split("答案是")[1]
    std::string piece = python_strip(text.substr(first, next == std::string::npos ? std::string::npos : next - first));
    pred = python_strip(piece.substr(0, piece.find("\n\n")));
  } else {
    pred = last_number(utf8_decode(python_replace(text, ",", "")));
  }
  // re.sub(r"\n\s*", "", pred)
  std::u32string u = utf8_decode(pred), joined;
  for (size_t i = 0; i < u.size();) {
    if (u[i] == U'\n') {
      ++i;
      while (i < u.size() && python_isspace(u[i])) ++i;
      continue;
    }
    joined += u[i++];
  }
  pred = utf8_encode(joined);
  if (!pred.empty() && pred[0] == ':') pred = pred.substr(1);
  if (!pred.empty() && pred.back() == '.') pred.pop_back();
  if (!pred.empty() && pred.back() == '/') pred.pop_back();
  return strip_string(pred);
}

std::string choice_answer_clean(const std::string& pred) {
  // parser.choice_answer_clean on the text eval_math.main hands it (one character of the output).
  std::string p = pred;
  while (!p.empty() && p.front() == '\n') p.erase(0, 1);
  while (!p.empty() && p.back() == '\n') p.pop_back();
  p = rstrip_chars(rstrip_chars(p, '.'), '/');
  while (!p.empty() && p.front() == ' ') p.erase(0, 1);
  while (!p.empty() && p.back() == ' ') p.pop_back();
  while (!p.empty() && p.front() == ':') p.erase(0, 1);
  std::string last_letter;
  const std::u32string upper = utf8_decode(python_upper_simple(p));
  for (size_t i = 0; i < upper.size(); ++i) {
    const char32_t c = upper[i];
    if (c < U'A' || c > U'E') continue;
    const bool left = i == 0 || !python_re_word(upper[i - 1]);
    const bool right = i + 1 == upper.size() || !python_re_word(upper[i + 1]);
    if (left && right) last_letter = std::string(1, static_cast<char>(c));
  }
  if (last_letter.empty()) {
    last_letter = python_strip(p);
    while (!last_letter.empty() && last_letter.front() == '.') last_letter.erase(0, 1);
    last_letter = rstrip_chars(last_letter, '.');
  }
  return rstrip_chars(rstrip_chars(last_letter, '.'), '/');
}

}  // namespace kvbench::metrics::qwen_math
