#include "harness/output_escaping.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace kvbench::harness {

namespace {
bool is_control(char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }
}  // namespace

bool has_control_character(std::string_view text) { return std::any_of(text.begin(), text.end(), is_control); }

std::string single_line(std::string_view text) {
  std::string out(text);
  for (char& ch : out)
    if (is_control(ch)) ch = ' ';
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string markdown_text(std::string_view text) {
  std::string out;
  for (char ch : single_line(text)) {
    switch (ch) {
      case '|':
      case '\\':
      case '[':
      case ']':
        out += '\\';
        out += ch;
        break;
      case '<': out += "&lt;"; break;  // Markdown passes HTML through: no tag may start here
      case '>': out += "&gt;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string latex_text(std::string_view raw) {
  // Unicode that LaTeX's default fonts lack, as math or text commands.
  static const std::vector<std::pair<std::string_view, std::string_view>> symbols = {
      {"±", "$\\pm$"},       {"—", "---"},     {"–", "--"},         {"Δ", "$\\Delta$"},     {"×", "$\\times$"},
      {"‡", "$^\\ddagger$"}, {"−", "$-$"},     {"λ", "$\\lambda$"}, {"♥", "$\\heartsuit$"}, {"♦", "$\\diamondsuit$"},
      {"≤", "$\\leq$"},      {"≥", "$\\geq$"}, {"…", "\\dots{}"}};
  const std::string s = single_line(raw);  // a newline would end a % comment or a paragraph
  std::string out;
  bool code = false;  // `command` -> \texttt{command}
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    switch (ch) {
      case '%':
      case '&':
      case '#':
      case '_':
      case '$':
      case '{':
      case '}':
        out += '\\';
        out += ch;
        continue;
      case '~': out += "\\textasciitilde{}"; continue;
      case '^': out += "\\textasciicircum{}"; continue;
      case '\\': out += "\\textbackslash{}"; continue;
      case '<': out += "\\textless{}"; continue;
      case '>': out += "\\textgreater{}"; continue;
      case '`':
        out += code ? "}" : "\\texttt{";
        code = !code;
        continue;
      default: break;
    }
    bool replaced = false;
    for (const auto& [from, to] : symbols)
      if (s.compare(i, from.size(), from) == 0) {
        out += to;
        i += from.size() - 1;
        replaced = true;
        break;
      }
    if (!replaced) out += ch;
  }
  if (code) out += "}";
  return out;
}

std::string gnuplot_string(std::string_view text) {
  std::string out = "'";
  for (char ch : single_line(text)) out += ch == '\'' ? std::string("''") : std::string(1, ch);
  return out + "'";
}

std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace kvbench::harness
