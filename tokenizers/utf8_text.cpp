#include "tokenizers/utf8_text.hpp"

#include <utf8proc.h>

#include <stdexcept>

namespace kvbench::models::utf8 {
namespace {

// How many bytes a well-formed sequence starting with `b` has (0: `b` cannot start one), and the
// allowed range of its second byte (Unicode Table 3-7).
int expected_length(unsigned char b, unsigned char* lo, unsigned char* hi) {
  *lo = 0x80;
  *hi = 0xBF;
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return 2;
  if (b >= 0xE0 && b <= 0xEF) {
    if (b == 0xE0) *lo = 0xA0;
    if (b == 0xED) *hi = 0x9F;
    return 3;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    if (b == 0xF0) *lo = 0x90;
    if (b == 0xF4) *hi = 0x8F;
    return 4;
  }
  return 0;
}

// Length of the longest prefix at `i` that is a valid sequence or the start of one (>= 1), and
// whether it is complete.
size_t maximal_prefix(const std::string& s, size_t i, bool* complete) {
  unsigned char lo, hi;
  const int want = expected_length(static_cast<unsigned char>(s[i]), &lo, &hi);
  *complete = want == 1;
  if (want <= 1) return 1;
  size_t n = 1;
  while (static_cast<int>(n) < want && i + n < s.size()) {
    const auto c = static_cast<unsigned char>(s[i + n]);
    const bool ok = n == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    if (!ok) break;
    ++n;
  }
  *complete = static_cast<int>(n) == want;
  return n;
}

}  // namespace

size_t char_length(const std::string& s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  return std::min(n, s.size() - i);
}

int32_t decode_at(const std::string& s, size_t i, size_t* length) {
  utf8proc_int32_t cp = -1;
  const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                                              static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
  *length = n > 0 ? static_cast<size_t>(n) : 1;
  return n > 0 ? cp : -1;
}

void require_valid(const std::string& s, const std::string& what) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    bool complete = false;
    const size_t n = maximal_prefix(s, i, &complete);
    if (!complete) throw std::invalid_argument(what + ": not valid UTF-8 at byte " + std::to_string(i));
    i += n;
  }
}

bool is_ascii(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

void append(std::string& out, int32_t cp) {
  utf8proc_uint8_t buf[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(cp, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

std::string lossy(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    bool complete = false;
    const size_t n = maximal_prefix(bytes, i, &complete);
    if (complete) {
      out.append(bytes, i, n);
    } else {
      out += "\xEF\xBF\xBD";
    }
    i += n;
  }
  return out;
}

bool is_whitespace(int32_t c) {
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

bool is_word_character(int32_t c) {
  if (c == '_') return true;
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

}  // namespace kvbench::models::utf8
