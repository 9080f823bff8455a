#include "datasets/data_root.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace kvbench::datasets {

std::string default_data_root() {
  if (const char* env = std::getenv("KVBENCH_DATA"); env && *env) return env;
  return std::string(KVBENCH_SHARED_DIR) + "/data";
}

std::string resolve_data_file(const std::string& root, const std::string& relative, const std::string& official_source) {
  const std::filesystem::path path = std::filesystem::path(root.empty() ? default_data_root() : root) / relative;
  if (!std::filesystem::exists(path))
    throw std::runtime_error(path.string() + ": data file missing (official source: " + official_source +
                             "; point --data-root or KVBENCH_DATA at your download)");
  return path.string();
}

std::string bundled_data_dir() { return KVBENCH_BUNDLED_DATA_DIR; }

}  // namespace kvbench::datasets
