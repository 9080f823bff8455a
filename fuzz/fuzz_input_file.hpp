#pragma once
// The fuzzer's bytes as a file the readers can open by path: an anonymous in-memory file
// (memfd), named /proc/self/fd/<n>, so no disk traffic per execution.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace kvbench::fuzz {

class InputFile {
 public:
  InputFile(const uint8_t* data, size_t size) {
    fd_ = ::memfd_create("kvbench-fuzz", MFD_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error("memfd_create failed");
    size_t written = 0;
    while (written < size) {
      const ssize_t n = ::write(fd_, data + written, size - written);
      if (n <= 0) throw std::runtime_error("memfd write failed");
      written += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~InputFile() { ::close(fd_); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace kvbench::fuzz
