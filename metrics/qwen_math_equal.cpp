#include "metrics/qwen_math_equal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "base/string_affixes.hpp"
#include "metrics/latex_expression.hpp"
#include "metrics/python_str.hpp"
#include "metrics/qwen_math_answer.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics::qwen_math {

namespace {

const std::vector<std::string> kLetters = {"A", "B", "C", "D", "E"};
bool is_letter_choice(const std::string& s) { return std::find(kLetters.begin(), kLetters.end(), s) != kLetters.end(); }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
using base::ends_with;
using base::starts_with;

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> parts;
  size_t from = 0;
  while (true) {
    const size_t at = s.find(sep, from);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(from, at - from));
    from = at + sep.size();
  }
  parts.push_back(s.substr(from));
  return parts;
}

// Python float(s) for ASCII text: surrounding whitespace, a sign, digits with single underscores
// between them, a point, an exponent, inf/infinity/nan in any case.
std::optional<double> python_float(const std::string& text) {
  const std::string s = python_strip(text);
  const std::string lower = python_lower(s);
  const size_t sign = !lower.empty() && (lower[0] == '+' || lower[0] == '-') ? 1 : 0;
  const std::string body = lower.substr(sign);
  const double negative = sign && lower[0] == '-' ? -1.0 : 1.0;
  if (body == "inf" || body == "infinity") return negative * HUGE_VAL;
  if (body == "nan") return std::nan("");
  std::string clean;
  size_t i = 0;
  bool digits = false;
  auto digit_run = [&]() {
    const size_t start = i;
    while (i < body.size()) {
      if (body[i] >= '0' && body[i] <= '9') { clean += body[i++]; continue; }
      if (body[i] == '_' && i > start && i + 1 < body.size() && body[i - 1] != '_' && body[i + 1] >= '0' && body[i + 1] <= '9') { ++i; continue; }
      break;
    }
    return i > start;
  };
  digits = digit_run();
  if (i < body.size() && body[i] == '.') {
    clean += body[i++];
    digits = digit_run() || digits;
  }
  if (!digits) return std::nullopt;
  if (i < body.size() && body[i] == 'e') {
    clean += body[i++];
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) clean += body[i++];
    if (!digit_run()) return std::nullopt;
  }
  if (i != body.size()) return std::nullopt;
  return negative * std::strtod(clean.c_str(), nullptr);
}

// grader.parse_digits: commas dropped, then float(), or float() of the text before a final "%"
// (and "\") divided by 100.
std::optional<double> parse_digits(const std::string& num) {
  std::string s = python_replace(num, ",", "");
  if (std::optional<double> v = python_float(s)) return v;
  if (!ends_with(s, "%")) return std::nullopt;
  s.pop_back();
  if (ends_with(s, "\\")) s.pop_back();
  if (std::optional<double> v = python_float(s)) return *v / 100;
  return std::nullopt;
}

// numeric_equal(prediction, reference) = math.isclose(reference, prediction, rel_tol=1e-4).
bool numeric_equal(double prediction, double reference) {
  if (prediction == reference) return true;
  if (std::isinf(prediction) || std::isinf(reference)) return false;
  const double diff = std::fabs(reference - prediction);
  return diff <= std::fabs(1e-4 * reference) || diff <= std::fabs(1e-4 * prediction);
}

// str_to_pmatrix: the text from its first '{' to its last '}' (when a ',' lies between) as one
// pmatrix whose commas become '\'.
std::string str_to_pmatrix(const std::string& input) {
  const std::string s = python_strip(input);
  const size_t open = s.find('{'), close = s.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close <= open) return "";
  std::string m = s.substr(open, close - open + 1);
  if (!contains(m.substr(1, m.size() - 2), ",")) return "";
  const size_t first = m.find_first_not_of("{}"), last = m.find_last_not_of("{}");
  m = first == std::string::npos ? "" : m.substr(first, last - first + 1);
  return "\\begin{pmatrix}" + python_replace(m, ",", "\\") + "\\end{pmatrix}";
}

std::string strip_any(const std::string& s, const std::string& chars) {
  const size_t first = s.find_first_not_of(chars);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(chars) - first + 1);
}

// regex.match(r"(\(|\[).+(\)|\])", s): an opening bracket first, a closing one later (not next).
bool bracketed(const std::string& s) {
  if (s.empty() || (s[0] != '(' && s[0] != '[')) return false;
  const size_t nl = s.find('\n');
  const std::string line = s.substr(0, nl);
  const size_t close = line.find_last_of(")]");
  return close != std::string::npos && close >= 2;
}

bool matrix(const std::string& s) {
  return (starts_with(s, "\\begin{pmatrix}") || starts_with(s, "\\begin{bmatrix}")) &&
         (ends_with(s, "\\end{pmatrix}") || ends_with(s, "\\end{bmatrix}"));
}

std::vector<std::string> matrix_rows(const std::string& s) {
  const size_t begin = std::string("\\begin{pmatrix}").size(), end = std::string("\\end{pmatrix}").size();
  std::vector<std::string> rows;
  if (s.size() < begin + end) return rows;  // Python's slice [15:-13] of a shorter text is empty
  for (const std::string& line : split(s.substr(begin, s.size() - begin - end), "\\\\"))
    if (!python_strip(line).empty()) rows.push_back(python_strip(line));
  return rows;
}

// s[1:-1] in code points.
std::string inner(const std::string& s) {
  const std::u32string u = utf8_decode(s);
  return u.size() < 2 ? std::string() : utf8_encode(u.substr(1, u.size() - 2));
}

size_t count_of(const std::string& s, char c) { return static_cast<size_t>(std::count(s.begin(), s.end(), c)); }

bool symbolic(const std::string& a, const std::string& b, bool* outside) {
  const SymbolicVerdict v = latex_symbolic_equal(a, b);
  if (v == SymbolicVerdict::kOutsideSubset && outside) *outside = true;
  return v == SymbolicVerdict::kEqual;
}

}  // namespace

bool math_equal(const std::optional<std::string>& pred, const std::string& ref, bool* outside) {
  if (!pred) return false;
  if (python_lower(python_strip(*pred)) == python_lower(python_strip(ref))) return true;
  if (is_letter_choice(ref) && choice_answer_clean(*pred) == ref) return true;
  const std::optional<double> p = parse_digits(*pred), r = parse_digits(ref);
  if (p && r) {
    for (double item : {*r / 100, *r, *r * 100})
      if (numeric_equal(*p, item)) return true;
    return false;
  }
  if (pred->empty()) return false;
  std::string reference = python_strip(ref);
  const std::string prediction = python_strip(*pred);
  if (contains(prediction, "pmatrix") && !contains(reference, "pmatrix")) reference = str_to_pmatrix(reference);

  std::string pred_str = prediction, ref_str = reference;
  if ((starts_with(prediction, "[") && ends_with(prediction, "]") && !starts_with(reference, "(")) ||
      (starts_with(prediction, "(") && ends_with(prediction, ")") && !starts_with(reference, "["))) {
    pred_str = strip_any(pred_str, "[]()");
    ref_str = strip_any(ref_str, "[]()");
  }
  for (const char* c : {"{", "}", "(", ")"}) {
    ref_str = python_replace(ref_str, c, "");
    pred_str = python_replace(pred_str, c, "");
  }
  if (python_lower(pred_str) == python_lower(ref_str)) return true;

  if (bracketed(prediction) && bracketed(reference)) {
    const std::vector<std::string> pp = split(inner(prediction), ","), rp = split(inner(reference), ",");
    if (pp.size() == rp.size()) {
      bool all = true;
      for (size_t i = 0; i < pp.size(); ++i) all = math_equal(pp[i], rp[i], outside) && all;
      if (all) return true;
    }
  }
  if (matrix(prediction) && matrix(reference)) {
    const std::vector<std::string> pl = matrix_rows(prediction), rl = matrix_rows(reference);
    bool matched = pl.size() == rl.size();
    for (size_t i = 0; matched && i < pl.size(); ++i) {
      const std::vector<std::string> pp = split(pl[i], "&"), rp = split(rl[i], "&");
      if (pp.size() != rp.size()) { matched = false; break; }
      for (size_t k = 0; k < pp.size(); ++k) matched = math_equal(pp[k], rp[k], outside) && matched;
    }
    if (matched) return true;
  }

  const std::vector<std::string> pe = split(prediction, "="), re = split(reference, "=");
  if (count_of(prediction, '=') == 1 && count_of(reference, '=') == 1) {
    const std::string pd = python_strip(pe[0]) + " - (" + python_strip(pe[1]) + ")";
    const std::string rd = python_strip(re[0]) + " - (" + python_strip(re[1]) + ")";
    if (symbolic(pd, rd, outside) || symbolic("-(" + pd + ")", rd, outside)) return true;
  } else if (count_of(prediction, '=') == 1 && utf8_decode(python_strip(pe[0])).size() <= 2 && !contains(reference, "=")) {
    if (math_equal(pe[1], reference, outside)) return true;
  } else if (count_of(reference, '=') == 1 && utf8_decode(python_strip(re[0])).size() <= 2 && !contains(prediction, "=")) {
    if (math_equal(prediction, re[1], outside)) return true;
  }
  return symbolic(prediction, reference, outside);
}

Verdict grade(const std::string& output, const std::string& gold, bool gold_is_solution) {
  static const std::vector<std::string> stop_words = {"</s>", "<|im_end|>", "<|endoftext|>", "\n题目："};
  std::string code = output;
  for (const std::string& stop : stop_words)
    if (contains(code, stop)) code = python_strip(code.substr(0, code.find(stop)));
  Verdict v;
  if (!code.empty() && code != "error") v.pred = strip_string(extract_answer(code));
  v.gt = strip_string(gold_is_solution ? extract_answer(gold) : gold);
  // eval_math.main's patch-ups for letter golds (with an empty output it raises; kept as None here).
  auto letters_only = [](const std::string& s) {
    for (char c : s)
      if (c < 'A' || c > 'E') return false;
    return true;
  };
  if (is_letter_choice(v.gt) && !(v.pred && is_letter_choice(*v.pred))) {
    if (!code.empty()) v.pred = choice_answer_clean(utf8_encode(utf8_decode(code).substr(0, 1)));
  } else if (letters_only(v.gt) && v.pred && !letters_only(*v.pred)) {
    std::string kept;
    for (char c : *v.pred)
      if (c >= 'A' && c <= 'E') kept += c;
    v.pred = kept;
  }
  v.correct = math_equal(v.pred, v.gt, &v.outside_subset);
  return v;
}

}  // namespace kvbench::metrics::qwen_math
