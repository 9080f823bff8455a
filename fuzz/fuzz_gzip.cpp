// Line framing of plain and gzip input (LineReader: zlib, truncated/corrupt streams). The
// fuzzer's bytes are wrapped as a gzip member half of the time so inflate gets deep coverage.
// fuzz-sources: datasets/line_reader.cpp datasets/regular_file.cpp
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/line_reader.hpp"
#include "fuzz/fuzz_input_file.hpp"

namespace {

std::vector<uint8_t> gzip(const uint8_t* data, size_t size) {
  z_stream s{};
  deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::vector<uint8_t> out(deflateBound(&s, size) + 32);
  s.next_in = const_cast<uint8_t*>(data);
  s.avail_in = static_cast<uInt>(size);
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

// True when reading failed with an error.
bool read_all(const uint8_t* data, size_t size) {
  kvbench::fuzz::InputFile file(data, size);
  try {
    kvbench::datasets::LineReader reader(file.path());
    std::string line;
    while (reader.next(line)) {
    }
  } catch (const std::runtime_error&) {
    return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0 && (data[0] & 1)) {
    // A valid gzip of the rest, cut at a point the input chooses: truncation must be reported.
    std::vector<uint8_t> packed = gzip(data + 1, size - 1);
    if (read_all(packed.data(), packed.size())) __builtin_trap();  // a complete stream reads
    const size_t cut = size > 2 ? packed.size() * data[1] / 256 : 0;
    // A stream cut anywhere after its 10-byte header must be reported, never read as complete.
    if (cut >= 10 && !read_all(packed.data(), cut)) __builtin_trap();
  } else {
    read_all(data, size);  // raw bytes: plain text, or a hand-made gzip header
  }
  return 0;
}
