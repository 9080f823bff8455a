// JSON Lines (plain or gzip) through for_each_jsonl and the typed field getters the tasks use.
// fuzz-sources: datasets/jsonl_reader.cpp datasets/line_reader.cpp datasets/json_parse.cpp datasets/regular_file.cpp
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "datasets/jsonl_reader.hpp"
#include "fuzz/fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvbench::fuzz::InputFile file(data, size);
  try {
    kvbench::datasets::for_each_jsonl(file.path(), [](const kvbench::datasets::JsonRecord& r) {
      for (const char* field : {"id", "input", "answers", "context", "length"}) {
        try {
          if (!r.has(field)) continue;
          (void)r.string_field_or(field, "");
        } catch (const kvbench::datasets::DataError&) {
        }
        try {
          (void)r.int_field_or(field, 0);
        } catch (const kvbench::datasets::DataError&) {
        }
        try {
          (void)r.string_list_field(field, true);
        } catch (const kvbench::datasets::DataError&) {
        }
        try {
          (void)r.number_field(field);
          (void)r.bool_field(field);
        } catch (const kvbench::datasets::DataError&) {
        }
      }
      return true;
    });
  } catch (const std::runtime_error&) {  // DataError, truncated/corrupt gzip
  }
  return 0;
}
