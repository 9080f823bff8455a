#pragma once
// Test helpers for the task families: fixture and golden paths, file reading, error capture.
#include "error_text.hpp"
#include "harness/file_tree.hpp"
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace kvbench::tasks::testing {

using kvbench::testing::error_of;

// tests/ in the source tree. __FILE__ is absolute, or relative to the build directory when ccache
// rewrote the compile command (CCACHE_BASEDIR).
inline std::filesystem::path tests_dir() {
  std::filesystem::path file(__FILE__);
  if (file.is_relative()) file = std::filesystem::path(KVBENCH_BUILD_DIR) / file;
  return std::filesystem::weakly_canonical(file).parent_path().parent_path();
}
inline std::string fixtures_dir() { return (tests_dir() / "fixtures").string(); }
inline std::string fixture(const std::string& relative) { return (tests_dir() / "fixtures" / relative).string(); }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
inline std::string golden(const std::string& name) { return read_file((tests_dir() / "tasks" / "golden_prompts" / name).string()); }

inline std::string shared_data(const std::string& relative) { return std::string(KVBENCH_SHARED_DIR) + "/data/" + relative; }


// A scratch directory under the temp dir, removed at scope exit.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / ("kvbench_" + std::to_string(::getpid()) + "_" + name)) {
    harness::remove_tree(path_.string());
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { harness::remove_tree(path_.string()); }
  std::string write(const std::string& relative, const std::string& bytes) const {
    const auto p = path_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace kvbench::tasks::testing
