#pragma once
// A whole file mapped read-only into memory (copy-on-write, so a stray write never reaches the
// file). Tensors made over its bytes hold a shared_ptr to it, so the mapping lives as long as any
// of them does: loading a checkpoint costs no copy and no memory beyond the pages touched.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace kvbench::models {

class MappedFile {
 public:
  static std::shared_ptr<MappedFile> open(const std::string& path);  // throws ModelLoadError
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile(std::string path, uint8_t* data, size_t size) : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kvbench::models
