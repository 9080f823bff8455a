#include "metrics/hendrycks_math.hpp"

#include <vector>

#include "metrics/unicode.hpp"

namespace kvbench::metrics {

namespace {

using Text = std::u32string;  // Python str: indexed and measured in code points

Text u32(const char* ascii) { return Text(ascii, ascii + std::char_traits<char>::length(ascii)); }

bool contains(const Text& s, const char* what) { return s.find(u32(what)) != Text::npos; }

// str.replace(old, new): every non-overlapping occurrence, left to right.
Text replace(const Text& s, const char* old_ascii, const char* new_ascii) {
  const Text old = u32(old_ascii), repl = u32(new_ascii);
  Text out;
  size_t from = 0;
  for (size_t at; (at = s.find(old, from)) != Text::npos; from = at + old.size()) out += s.substr(from, at - from) + repl;
  return out + s.substr(from);
}

// str.split(sep): every piece, empty ones included.
std::vector<Text> split(const Text& s, const Text& sep) {
  std::vector<Text> pieces;
  size_t from = 0;
  for (size_t at; (at = s.find(sep, from)) != Text::npos; from = at + sep.size()) pieces.push_back(s.substr(from, at - from));
  pieces.push_back(s.substr(from));
  return pieces;
}

char32_t at(const Text& s, size_t i) {  // s[i], IndexError past the end
  if (i >= s.size()) throw PythonRaised("IndexError: string index out of range");
  return s[i];
}

Text fix_fracs(const Text& s) {
  std::vector<Text> pieces = split(s, u32("\\frac"));
  Text out = pieces[0];
  for (size_t i = 1; i < pieces.size(); ++i) {
    const Text& piece = pieces[i];
    out += u32("\\frac");
    if (at(piece, 0) == U'{') {
      out += piece;
      continue;
    }
    if (piece.size() < 2) return s;  // the reference's `except AssertionError: return string`
    const Text a(1, piece[0]), b(1, piece[1]), rest = piece.substr(2);
    out += b != U"{" ? U"{" + a + U"}{" + b + U"}" + rest : U"{" + a + U"}" + b + rest;
  }
  return out;
}

// Python int(text) succeeds: whitespace around, a sign, decimal digits (Unicode Nd) with single
// underscores between them, at most 4300 digits (CPython's int_max_str_digits).
bool python_int_parses(const Text& text) {
  size_t b = 0, e = text.size();
  while (b < e && python_isspace(text[b])) ++b;
  while (e > b && python_isspace(text[e - 1])) --e;
  if (b < e && (text[b] == U'+' || text[b] == U'-')) ++b;
  if (b == e || !python_re_digit(text[b]) || !python_re_digit(text[e - 1])) return false;
  size_t digits = 0;
  for (size_t i = b; i < e; ++i) {
    if (python_re_digit(text[i])) ++digits;
    else if (text[i] != U'_' || text[i - 1] == U'_') return false;
  }
  return digits <= 4300;
}

// str(int(text)) == text.
bool canonical_int(const Text& text) {
  size_t i = !text.empty() && text[0] == U'-' ? 1 : 0;
  if (i == text.size() || text == U"-0" || (text[i] == U'0' && text.size() > i + 1)) return false;
  for (; i < text.size(); ++i)
    if (text[i] < U'0' || text[i] > U'9') return false;
  return true;
}

Text fix_a_slash_b(const Text& s) {
  const std::vector<Text> pieces = split(s, U"/");
  if (pieces.size() != 2) return s;
  if (!python_int_parses(pieces[0]) || !python_int_parses(pieces[1])) throw PythonRaised("ValueError: invalid literal for int()");
  if (!canonical_int(pieces[0]) || !canonical_int(pieces[1])) return s;  // the AssertionError it catches
  return U"\\frac{" + pieces[0] + U"}{" + pieces[1] + U"}";
}

Text remove_right_units(const Text& s) {
  if (!contains(s, "\\text{ ")) return s;
  const std::vector<Text> pieces = split(s, u32("\\text{ "));
  if (pieces.size() != 2) throw PythonRaised("AssertionError: remove_right_units");
  return pieces[0];
}

Text fix_sqrt(const Text& s) {
  if (!contains(s, "\\sqrt")) return s;
  const std::vector<Text> pieces = split(s, u32("\\sqrt"));
  Text out = pieces[0];
  for (size_t i = 1; i < pieces.size(); ++i) {
    const Text& piece = pieces[i];
    out += at(piece, 0) != U'{' ? u32("\\sqrt{") + piece[0] + U"}" + piece.substr(1) : u32("\\sqrt") + piece;
  }
  return out;
}

}  // namespace

std::optional<std::string> last_boxed_only_string(const std::string& text) {
  const std::string spaced = "\\boxed ";
  if (text.find(spaced) != std::string::npos) {  // checked before any brace form, as the reference does
    const std::string after = text.substr(text.rfind(spaced) + spaced.size());
    return spaced + after.substr(0, after.find('$'));
  }
  size_t start = text.rfind("\\boxed");
  if (start == std::string::npos) start = text.rfind("\\fbox");
  if (start == std::string::npos) return std::nullopt;
  int open = 0;
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] == '{') ++open;
    if (text[i] == '}' && --open == 0) return text.substr(start, i + 1 - start);
  }
  return std::nullopt;
}

std::string remove_boxed(const std::string& boxed) {
  const std::string spaced = "\\boxed ", braced = "\\boxed{";
  if (boxed.find(spaced) != std::string::npos) {
    if (boxed.compare(0, spaced.size(), spaced) != 0) throw PythonRaised("AssertionError: remove_boxed");
    return boxed.substr(spaced.size());
  }
  if (boxed.compare(0, braced.size(), braced) != 0 || boxed.back() != '}') throw PythonRaised("AssertionError: remove_boxed");
  return boxed.substr(braced.size(), boxed.size() - braced.size() - 1);
}

std::string hendrycks_strip_string(const std::string& text) {
  Text s = utf8_decode(text);
  s = replace(s, "\n", "");
  s = replace(s, "\\!", "");
  s = replace(s, "\\\\", "\\");
  s = replace(s, "tfrac", "frac");
  s = replace(s, "dfrac", "frac");
  s = replace(s, "\\left", "");
  s = replace(s, "\\right", "");
  s = replace(s, "^{\\circ}", "");
  s = replace(s, "^\\circ", "");
  s = replace(s, "\\$", "");
  s = remove_right_units(s);
  s = replace(s, "\\%", "");  // the reference's "\%" is the same two characters
  s = replace(s, " .", " 0.");
  s = replace(s, "{.", "{0.");
  if (s.empty()) return "";
  if (s[0] == U'.') s = U"0" + s;
  const std::vector<Text> sides = split(s, U"=");
  if (sides.size() == 2 && sides[0].size() <= 2) s = sides[1];  // "k = 3" -> " 3"
  s = fix_sqrt(s);
  s = replace(s, " ", "");
  s = fix_fracs(s);
  if (s == U"0.5") s = u32("\\frac{1}{2}");
  s = fix_a_slash_b(s);
  return utf8_encode(s);
}

bool hendrycks_is_equiv(const std::optional<std::string>& a, const std::optional<std::string>& b) {
  if (!a || !b) return !a && !b;
  try {
    return hendrycks_strip_string(*a) == hendrycks_strip_string(*b);
  } catch (const PythonRaised&) {
    return *a == *b;
  }
}

}  // namespace kvbench::metrics
