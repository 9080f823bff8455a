#include "metrics/bleu_tokenizers.hpp"

#include <stdexcept>

#include <utf8proc.h>

#include "metrics/python_str.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {
namespace {

bool ascii_digit(char c) { return c >= '0' && c <= '9'; }

// [\{-\~\[-\` -\&\(-\+\:-\@\/]: all ASCII punctuation and the space, except ' , - .
bool mteval_punct(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 0x7B && u <= 0x7E) || (u >= 0x5B && u <= 0x60) || (u >= 0x20 && u <= 0x26) ||
         (u >= 0x28 && u <= 0x2B) || (u >= 0x3A && u <= 0x40) || u == 0x2F;
}

// The 13a patterns only ever match ASCII bytes, and a UTF-8 continuation or lead byte is never
// one of them, so running them over bytes gives exactly re.sub's result over code points.
std::string regexp_13a(const std::string& in) {
  std::string a;
  a.reserve(in.size() * 2);
  for (char c : in) {
    if (mteval_punct(c)) {
      a += ' ';
      a += c;
      a += ' ';
    } else {
      a += c;
    }
  }
  std::string b;
  b.reserve(a.size() + a.size() / 4);
  for (size_t i = 0; i < a.size();) {  // ([^0-9])([\.,]) -> "\1 \2 "
    if (i + 1 < a.size() && !ascii_digit(a[i]) && (a[i + 1] == '.' || a[i + 1] == ',')) {
      b += a[i];
      b += ' ';
      b += a[i + 1];
      b += ' ';
      i += 2;
    } else {
      b += a[i++];
    }
  }
  std::string c;
  c.reserve(b.size() + b.size() / 4);
  for (size_t i = 0; i < b.size();) {  // ([\.,])([^0-9]) -> " \1 \2"
    if (i + 1 < b.size() && (b[i] == '.' || b[i] == ',') && !ascii_digit(b[i + 1])) {
      c += ' ';
      c += b[i];
      c += ' ';
      c += b[i + 1];
      i += 2;
    } else {
      c += b[i++];
    }
  }
  std::string d;
  d.reserve(c.size() + c.size() / 8);
  for (size_t i = 0; i < c.size();) {  // ([0-9])(-) -> "\1 \2 "
    if (i + 1 < c.size() && ascii_digit(c[i]) && c[i + 1] == '-') {
      d += c[i];
      d += ' ';
      d += '-';
      d += ' ';
      i += 2;
    } else {
      d += c[i++];
    }
  }
  return d;
}

utf8proc_category_t category(char32_t c) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

bool is_punct(char32_t c) {  // \p{P}
  switch (category(c)) {
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

bool is_symbol(char32_t c) {  // \p{S}
  switch (category(c)) {
    case UTF8PROC_CATEGORY_SM: case UTF8PROC_CATEGORY_SC: case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO:
      return true;
    default:
      return false;
  }
}

bool is_number(char32_t c) {  // \p{N}
  switch (category(c)) {
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string python_rstrip(const std::string& s) {
  size_t end = s.size();
  while (end > 0) {
    const auto last = static_cast<unsigned char>(s[end - 1]);
    if (last < 0x80) {
      if (!python_isspace(last)) break;
      --end;
      continue;
    }
    size_t start = end - 1;  // back to the lead byte of the last code point
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 && end - start < 4) --start;
    const std::u32string cp = utf8_decode(s.substr(start, end - start));
    if (cp.size() != 1 || !python_isspace(cp[0])) break;
    end = start;
  }
  return s.substr(0, end);
}

std::vector<std::string> bleu_tokenize_13a(const std::string& line) {
  std::string s = line;
  s = python_replace(s, "<skipped>", "");
  s = python_replace(s, "-\n", "");
  s = python_replace(s, "\n", " ");
  if (s.find('&') != std::string::npos) {
    s = python_replace(s, "&quot;", "\"");
    s = python_replace(s, "&amp;", "&");
    s = python_replace(s, "&lt;", "<");
    s = python_replace(s, "&gt;", ">");
  }
  return python_split_ws(regexp_13a(" " + s + " "));
}

std::vector<std::string> bleu_tokenize_intl(const std::string& line) {
  const std::u32string in = utf8_decode(line);
  std::u32string a;
  a.reserve(in.size() * 2);
  for (size_t i = 0; i < in.size();) {  // (\P{N})(\p{P}) -> "\1 \2 "
    if (i + 1 < in.size() && !is_number(in[i]) && is_punct(in[i + 1])) {
      a += in[i];
      a += U' ';
      a += in[i + 1];
      a += U' ';
      i += 2;
    } else {
      a += in[i++];
    }
  }
  std::u32string b;
  b.reserve(a.size() + a.size() / 4);
  for (size_t i = 0; i < a.size();) {  // (\p{P})(\P{N}) -> " \1 \2"
    if (i + 1 < a.size() && is_punct(a[i]) && !is_number(a[i + 1])) {
      b += U' ';
      b += a[i];
      b += U' ';
      b += a[i + 1];
      i += 2;
    } else {
      b += a[i++];
    }
  }
  std::vector<std::string> out;
  std::u32string word;
  auto flush = [&] {
    if (!word.empty()) out.push_back(utf8_encode(word));
    word.clear();
  };
  for (char32_t c : b) {  // (\p{S}) -> " \1 ", then split()
    if (python_isspace(c)) {
      flush();
    } else if (is_symbol(c)) {
      flush();
      out.push_back(utf8_encode(c));
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

std::vector<std::string> bleu_tokenize_none(const std::string& line) { return python_split_ws(line); }

std::vector<std::string> bleu_preprocess(const std::string& segment, const std::string& tokenize,
                                         bool lowercase) {
  const std::string text = python_rstrip(lowercase ? python_lower(segment) : segment);
  if (tokenize == "13a") return bleu_tokenize_13a(text);
  if (tokenize == "intl") return bleu_tokenize_intl(text);
  if (tokenize == "none") return bleu_tokenize_none(text);
  throw std::invalid_argument("unknown BLEU tokenizer '" + tokenize + "' (expected 13a, intl or none)");
}

}  // namespace kvbench::metrics
