#pragma once
// The one JSON parser every kvbench file goes through (job, grid and table specs, results,
// config.json, safetensors headers, JSONL lines, claims): nlohmann's parser plus the checks it
// lacks. Nesting deeper than kMaxJsonDepth is refused before parsing (nlohmann's recursive
// copy/compare/dump would overflow the stack), a key repeated in one object is an error
// (nlohmann silently keeps the last), and every problem is one DataError
// "<origin>:<line>: invalid JSON: <what> (column C)", the number too large for a double included.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "datasets/data_error.hpp"

namespace kvbench::datasets {

constexpr int kMaxJsonDepth = 256;

// `first_line` is the line number of text's first line in `origin` (JSONL records).
nlohmann::json parse_json(std::string_view text, const std::string& origin, int64_t first_line = 1);

// Where each element of the top-level JSON array `text` starts (offsets into it; none when it is
// not an array), so an error inside one element can name its line within that element.
std::vector<size_t> json_array_element_offsets(std::string_view text);

// Reads a whole regular file and parses it; errors name the file.
nlohmann::json read_json_file(const std::string& path);

}  // namespace kvbench::datasets
