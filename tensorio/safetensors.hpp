#pragma once
// The safetensors format (huggingface/safetensors): an 8-byte little-endian header length N, a
// JSON header of N bytes mapping each tensor name to {dtype, shape, data_offsets: [begin, end)}
// relative to the byte after the header (plus an optional "__metadata__" of strings), then the
// raw little-endian data. Reading maps the file and returns zero-copy tensors in the stored dtype.
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensorio/mapped_file.hpp"

namespace kvbench::models {

class SafetensorsFile {
 public:
  // Validates the whole header (length, JSON, every entry's dtype, shape and offsets) up front;
  // throws ModelLoadError naming the file, the tensor and the field.
  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return file_->path(); }
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const { return entries_.count(name) > 0; }
  // A view over the mapped bytes (copied only if the bytes are misaligned for the dtype).
  torch::Tensor tensor(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  struct Entry {
    torch::ScalarType dtype;
    std::vector<int64_t> shape;
    size_t begin = 0, end = 0;  // absolute offsets in the file
  };
  std::shared_ptr<MappedFile> file_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

// "F32" -> kFloat32, ...; throws std::invalid_argument for a dtype kvbench does not read.
torch::ScalarType safetensors_dtype(const std::string& name);
std::string safetensors_dtype_name(torch::ScalarType dtype);

// Writes tensors (contiguous copies are taken as needed) atomically (temp file + rename), header
// padded with spaces to a multiple of 8 bytes as the reference writer does.
void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace kvbench::models
