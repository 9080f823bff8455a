// CSV (RFC 4180 with Python csv's leniency): parse_csv on text, and for_each_csv on the bytes
// as a file (plain or gzip).
// fuzz-sources: datasets/csv_reader.cpp datasets/line_reader.cpp datasets/regular_file.cpp
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "datasets/csv_reader.hpp"
#include "fuzz/fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    for (const auto& row : kvbench::datasets::parse_csv(std::string(reinterpret_cast<const char*>(data), size), "fuzz.csv")) {
      try {
        row.expect_width(6);
      } catch (const kvbench::datasets::DataError&) {
      }
    }
  } catch (const std::runtime_error&) {
  }
  kvbench::fuzz::InputFile file(data, size);
  try {
    kvbench::datasets::for_each_csv(file.path(), [](const kvbench::datasets::CsvRow&) { return true; });
  } catch (const std::runtime_error&) {
  }
  return 0;
}
