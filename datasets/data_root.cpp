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

std::string resolve_bundled_data_file(const std::string& root, const std::string& relative, const std::string& official_source) {
  const std::filesystem::path user = std::filesystem::path(root.empty() ? default_data_root() : root) / relative;
  if (std::filesystem::exists(user)) return user.string();
  const std::filesystem::path bundled = std::filesystem::path(KVBENCH_BUNDLED_DATA_DIR) / relative;
  if (std::filesystem::exists(bundled)) return bundled.string();
  return resolve_data_file(root, relative, official_source);
}

}  // namespace kvbench::datasets
