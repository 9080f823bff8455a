// The shared JSON parser (datasets/json_parse.hpp) every spec, result, config and JSONL line
// goes through: depth limit, duplicate keys, number overflow. Anything but DataError is a bug.
// fuzz-sources: datasets/json_parse.cpp datasets/regular_file.cpp
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "datasets/json_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    nlohmann::json value = kvbench::datasets::parse_json(text, "fuzz.json");
    // What callers do with a parsed value: copy, compare, dump (all recursive in nlohmann).
    nlohmann::json copy = value;
    if (copy != value) __builtin_trap();
    const std::string dumped = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (kvbench::datasets::parse_json(dumped, "dump") != value) __builtin_trap();  // round trip
  } catch (const kvbench::datasets::DataError&) {
  }
  return 0;
}
