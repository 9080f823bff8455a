#pragma once
// GPT-2's byte-level alphabet: every byte is shown as one printable character (space -> "Ġ",
// newline -> "Ċ"), so a BPE vocabulary over those characters covers any byte string.
#include <string>

namespace kvbench::models::byte_level {

// The UTF-8 text of the character that stands for each byte.
const std::string& char_of_byte(unsigned char b);
// `text`'s bytes, each replaced by its character.
std::string encode(const std::string& text);
// The byte a code point stands for, or -1 when it is not in the alphabet.
int byte_of_char(int32_t code_point);
// The inverse of `encode` for one token: its bytes (maybe not UTF-8). A token with any character
// outside the alphabet (an added token such as "a b") is returned unchanged, as Hugging Face's
// ByteLevel decoder does.
std::string decode_bytes(const std::string& token);
// GPT-2's pre-tokenization pattern (ByteLevel with use_regex).
const char* gpt2_pattern();

}  // namespace kvbench::models::byte_level
