#include "metrics/unicode.hpp"

#include <utf8proc.h>

namespace kvbench::metrics {

std::u32string utf8_decode(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // invalid byte: replace and skip one byte
      out.push_back(0xFFFD);
      ++p;
      --left;
      continue;
    }
    out.push_back(static_cast<char32_t>(cp));
    p += n;
    left -= n;
  }
  return out;
}

std::string utf8_encode(char32_t c) {
  utf8proc_uint8_t buf[4];
  utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buf);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

std::string utf8_encode(const std::u32string& s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      out += utf8_encode(c);
    }
  }
  return out;
}

namespace {

bool is_cased(char32_t c) {
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  if (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT) {
    return true;
  }
  auto cp = static_cast<utf8proc_int32_t>(c);
  return utf8proc_tolower(cp) != cp || utf8proc_toupper(cp) != cp;
}

bool is_case_ignorable(char32_t c) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK:
      return true;
    default:
      break;
  }
  // Word_Break MidLetter, MidNumLet and Single_Quote (Unicode 14).
  switch (c) {
    case U'\'': case U'.': case U':': case 0x00B7: case 0x0387: case 0x055F: case 0x05F4:
    case 0x2018: case 0x2019: case 0x2024: case 0x2027: case 0xFE13: case 0xFE52: case 0xFE55:
    case 0xFF07: case 0xFF0E: case 0xFF1A:
      return true;
    default:
      return false;
  }
}

// Python's Final_Sigma: preceded by a cased letter and not followed by one (case-ignorables
// skipped on both sides).
bool final_sigma(const std::u32string& s, size_t i) {
  size_t j = i;
  bool before = false;
  while (j > 0) {
    --j;
    if (is_case_ignorable(s[j])) continue;
    before = is_cased(s[j]);
    break;
  }
  if (!before) return false;
  for (size_t k = i + 1; k < s.size(); ++k) {
    if (is_case_ignorable(s[k])) continue;
    return !is_cased(s[k]);
  }
  return true;
}

}  // namespace

std::u32string python_lower(const std::u32string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c < 0x80) {
      out.push_back((c >= 'A' && c <= 'Z') ? c + 32 : c);
    } else if (c == 0x0130) {  // the one unconditional multi-character lowercase mapping
      out.push_back(U'i');
      out.push_back(0x0307);
    } else if (c == 0x03A3) {
      out.push_back(final_sigma(s, i) ? 0x03C2 : 0x03C3);
    } else {
      out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
  }
  return out;
}

std::string python_lower(const std::string& s) {
  bool ascii = true;
  for (unsigned char ch : s) ascii = ascii && ch < 0x80;
  if (ascii) {
    std::string out = s;
    for (char& ch : out) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch + 32);
    }
    return out;
  }
  return utf8_encode(python_lower(utf8_decode(s)));
}

std::string python_upper_simple(const std::string& s) {
  std::u32string u = utf8_decode(s);
  for (char32_t& c : u) c = static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c)));
  return utf8_encode(u);
}

bool python_isspace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  switch (c) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

bool python_isupper(char32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z';
  const auto cp = static_cast<utf8proc_int32_t>(c);
  const auto cat = utf8proc_category(cp);
  return cat == UTF8PROC_CATEGORY_LU || (cat != UTF8PROC_CATEGORY_LT && utf8proc_tolower(cp) != cp);
}

bool python_islower(char32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z';
  const auto cp = static_cast<utf8proc_int32_t>(c);
  const auto cat = utf8proc_category(cp);
  return cat == UTF8PROC_CATEGORY_LL || (cat != UTF8PROC_CATEGORY_LT && utf8proc_toupper(cp) != cp);
}

bool python_re_digit(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_ND;
}

bool unicode_punctuation(char32_t c) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS: case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF: case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

bool python_re_word(char32_t c) {
  if (c < 0x80) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

std::vector<std::string> python_split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::u32string cur;
  bool ascii = true;
  for (unsigned char ch : s) ascii = ascii && ch < 0x80;
  if (ascii) {
    std::string w;
    for (char ch : s) {
      if (python_isspace(static_cast<unsigned char>(ch))) {
        if (!w.empty()) out.push_back(std::move(w));
        w.clear();
      } else {
        w.push_back(ch);
      }
    }
    if (!w.empty()) out.push_back(std::move(w));
    return out;
  }
  for (char32_t c : utf8_decode(s)) {
    if (python_isspace(c)) {
      if (!cur.empty()) out.push_back(utf8_encode(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(utf8_encode(cur));
  return out;
}

std::string python_strip(const std::string& s) {
  const std::u32string t = utf8_decode(s);
  std::size_t begin = 0, end = t.size();
  while (begin < end && python_isspace(t[begin])) ++begin;
  while (end > begin && python_isspace(t[end - 1])) --end;
  return utf8_encode(t.substr(begin, end - begin));
}

std::string python_collapse_ws(const std::string& s) {
  std::string out;
  for (const auto& w : python_split_ws(s)) {
    if (!out.empty()) out.push_back(' ');
    out += w;
  }
  return out;
}

}  // namespace kvbench::metrics
