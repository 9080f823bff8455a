#pragma once
// The few UTF-8 operations Python's str semantics need: templates index, slice and measure
// strings in code points, and strip Python's (Unicode) whitespace.
#include <cstdint>
#include <string>
#include <vector>

namespace kvbench::jinja::utf8 {

// Code points of `s`; an invalid byte is taken as one code point of its own value (never throws).
std::vector<char32_t> decode(const std::string& s);
std::string encode(const std::vector<char32_t>& cps);
void append(std::string& out, char32_t cp);
size_t length(const std::string& s);  // in code points

// Python's str.isspace().
bool is_space(char32_t cp);

}  // namespace kvbench::jinja::utf8
