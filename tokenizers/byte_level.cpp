#include "tokenizers/byte_level.hpp"

#include <array>
#include <vector>

#include "tokenizers/utf8_text.hpp"

namespace kvbench::models::byte_level {
namespace {

struct Alphabet {
  std::array<std::string, 256> chars;
  std::array<int32_t, 256> code_points{};
  std::vector<int> byte_of;  // indexed by code point, up to 0x1FF

  Alphabet() : byte_of(0x200, -1) {
    // Printable Latin-1 bytes stand for themselves; the others take 256, 257, ... in byte order.
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const int cp = printable ? b : next++;
      code_points[b] = cp;
      utf8::append(chars[b], cp);
      byte_of[cp] = b;
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

const std::string& char_of_byte(unsigned char b) { return alphabet().chars[b]; }

std::string encode(const std::string& text) {
  const Alphabet& a = alphabet();
  std::string out;
  out.reserve(text.size() * 2);
  for (unsigned char b : text) out += a.chars[b];
  return out;
}

int byte_of_char(int32_t cp) {
  const Alphabet& a = alphabet();
  return cp >= 0 && cp < static_cast<int32_t>(a.byte_of.size()) ? a.byte_of[cp] : -1;
}

std::string decode_bytes(const std::string& token) {
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size();) {
    size_t n = 1;
    const int b = byte_of_char(utf8::decode_at(token, i, &n));
    if (b < 0) return token;  // a character outside the alphabet: the token stays as it is
    out.push_back(static_cast<char>(b));
    i += n;
  }
  return out;
}

const char* gpt2_pattern() { return R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"; }

}  // namespace kvbench::models::byte_level
