#pragma once
// Test helper: a file with given bytes under the temp dir, removed at scope exit.
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kvbench::datasets::testing {

class TempFile {
 public:
  TempFile(const std::string& name, const std::string& bytes, bool gzip = false) {
    path_ = (std::filesystem::temp_directory_path() / ("kvbench_" + std::to_string(::getpid()) + "_" + name)).string();
    if (gzip) {
      gzFile f = gzopen(path_.c_str(), "wb");
      gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
      gzclose(f);
    } else {
      std::ofstream(path_, std::ios::binary) << bytes;
    }
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A fresh directory under the temp dir, removed with its content at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& name = "dir") {
    path_ = (std::filesystem::temp_directory_path() / ("kvbench_" + std::to_string(::getpid()) + "_" + name)).string();
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace kvbench::datasets::testing
