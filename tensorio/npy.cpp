#include "tensorio/npy.hpp"

#include <cstring>
#include <limits>
#include <regex>

#include "tensorio/mapped_file.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace {

torch::ScalarType npy_dtype(const std::string& descr, const std::string& path) {
  static const std::pair<const char*, torch::ScalarType> table[] = {
      {"<f8", torch::kFloat64}, {"<f4", torch::kFloat32}, {"<f2", torch::kFloat16}, {"<i8", torch::kInt64},
      {"<i4", torch::kInt32},   {"<i2", torch::kInt16},   {"|i1", torch::kInt8},    {"|u1", torch::kUInt8},
      {"|b1", torch::kBool}};
  for (const auto& [name, type] : table)
    if (descr == name) return type;
  throw ModelLoadError(path, "header field 'descr': dtype '" + descr +
                                 "' is not one kvbench reads (little-endian floats and integers: <f8, <f4, <f2, <i8, <i4, <i2, |i1, |u1, |b1)");
}

}  // namespace

torch::Tensor read_npy(const std::string& path) {
  const auto file = MappedFile::open(path);
  const uint8_t* bytes = file->data();
  const size_t size = file->size();
  if (size < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0) throw ModelLoadError(path, "not a .npy file (no \\x93NUMPY magic)");
  const int major = bytes[6];
  if (major < 1 || major > 3) throw ModelLoadError(path, "unknown .npy version " + std::to_string(major));
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (size < 8 + length_bytes) throw ModelLoadError(path, "truncated header");
  size_t header_len = 0;
  for (size_t i = 0; i < length_bytes; ++i) header_len |= static_cast<size_t>(bytes[8 + i]) << (8 * i);
  const size_t data_start = 8 + length_bytes + header_len;
  if (data_start > size) throw ModelLoadError(path, "the header length runs past the end of the file");
  const std::string header(reinterpret_cast<const char*>(bytes) + 8 + length_bytes, header_len);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')")))
    throw ModelLoadError(path, "header has no field 'descr'");
  const torch::ScalarType dtype = npy_dtype(m[1], path);
  if (!std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*(True|False))")))
    throw ModelLoadError(path, "header has no field 'fortran_order'");
  if (m[1] == "True") throw ModelLoadError(path, "header field 'fortran_order': Fortran-ordered arrays are not read (save it in C order)");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
    throw ModelLoadError(path, "header has no field 'shape'");
  std::vector<int64_t> shape;
  const std::string dims = m[1];
  const std::regex number(R"(\d+)");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), number); it != std::sregex_iterator(); ++it) {
    if (it->str().size() > 12) throw ModelLoadError(path, "header field 'shape': dimension " + it->str() + " is too large");
    shape.push_back(std::stoll(it->str()));
  }
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) throw ModelLoadError(path, "header field 'shape': too many elements");
    count *= d;
  }
  const size_t element = c10::elementSize(dtype);
  if (static_cast<uint64_t>(count) > (size - data_start) / element)
    throw ModelLoadError(path, "truncated: the shape needs " + std::to_string(count) + " elements, the file holds " +
                                   std::to_string((size - data_start) / element));
  torch::Tensor out = torch::empty(shape, dtype);
  if (count > 0) std::memcpy(out.data_ptr(), bytes + data_start, static_cast<size_t>(count) * element);  // an empty tensor has no data
  return out;
}

}  // namespace kvbench::models
