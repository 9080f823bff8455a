#pragma once
// UTF-8 helpers shared by the Hugging Face tokenizer pipeline.
#include <cstdint>
#include <string>

namespace kvbench::models::utf8 {

// Length in bytes of the (valid) UTF-8 character starting at `s[i]`.
size_t char_length(const std::string& s, size_t i);
// The code point at `s[i]`, and its byte length in `*length`; -1 when the bytes are not valid UTF-8.
int32_t decode_at(const std::string& s, size_t i, size_t* length);
// Throws std::invalid_argument naming the byte offset when `s` is not valid UTF-8.
void require_valid(const std::string& s, const std::string& what);
bool is_ascii(const std::string& s);
void append(std::string& out, int32_t code_point);
// Rust's String::from_utf8_lossy: each maximal ill-formed subsequence becomes one U+FFFD.
std::string lossy(const std::string& bytes);
// Rust's char::is_whitespace (Unicode White_Space) and "is_alphanumeric or '_'".
bool is_whitespace(int32_t c);
bool is_word_character(int32_t c);

}  // namespace kvbench::models::utf8
