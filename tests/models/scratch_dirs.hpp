#pragma once
// Fresh directories under /tmp that live until the test program ends: the checkpoint writers hand
// their paths to several checks, so a directory cannot be removed at the end of one scope.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/file_tree.hpp"

namespace kvbench::testing {

inline std::filesystem::path fresh_dir(const std::string& prefix) {
  struct ScratchDirs {
    std::vector<std::string> paths;
    ~ScratchDirs() {
      for (const auto& p : paths) harness::remove_tree(p);
    }
  };
  static ScratchDirs scratch;
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  scratch.paths.push_back(pattern);
  return pattern;
}

}  // namespace kvbench::testing
