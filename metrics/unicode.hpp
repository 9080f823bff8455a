// Python-compatible Unicode primitives (str.lower, str.split whitespace, re's \d and \w) on top
// of utf8proc, so the scorers treat non-ASCII text exactly as the reference Python code does.
#pragma once

#include <string>
#include <vector>

namespace kvbench::metrics {

// UTF-8 <-> code points. Invalid bytes decode to U+FFFD (Python would refuse them; our inputs
// come from JSON, which is valid UTF-8).
std::u32string utf8_decode(const std::string& s);
std::string utf8_encode(const std::u32string& s);
std::string utf8_encode(char32_t c);

// Python `str.lower()`: full lowercase mapping (U+0130 -> "i\u0307"), Final_Sigma context for
// U+03A3. Unicode version is utf8proc's (Python 3.11 uses 14.0; they agree on every cased letter
// the golden inputs contain).
std::u32string python_lower(const std::u32string& s);
std::string python_lower(const std::string& s);
// Python `str.upper()` by the one-to-one case mappings (utf8proc's): Python's few one-to-many ones
// (ß -> "SS", ŉ -> "ʼN") keep one code point here.
std::string python_upper_simple(const std::string& s);

// Python `str.isspace()` for one code point: what `str.split()` with no argument splits on.
bool python_isspace(char32_t c);
// Python `c.isupper()` / `c.islower()` for one code point: the Uppercase / Lowercase properties,
// read from utf8proc as category Lu / Ll or a case mapping (Other_Lowercase letters without one,
// such as U+00AA, are not lowercase here).
bool python_isupper(char32_t c);
bool python_islower(char32_t c);
// `re` (str pattern) `\d`: Unicode category Nd.
bool python_re_digit(char32_t c);
// `re` (str pattern) `\w`: str.isalnum() or '_' (letters L*, numbers N*).
bool python_re_word(char32_t c);

// unicodedata.category(c).startswith("P"): Unicode punctuation (Pc, Pd, Ps, Pe, Pi, Pf, Po).
bool unicode_punctuation(char32_t c);

// Python `s.split()`: runs of Unicode whitespace separate, no empty pieces.
std::vector<std::string> python_split_ws(const std::string& s);
// Python `s.strip()`: Unicode whitespace off both ends.
std::string python_strip(const std::string& s);
// Python `" ".join(s.split())`.
std::string python_collapse_ws(const std::string& s);

}  // namespace kvbench::metrics
