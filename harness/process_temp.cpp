#include "harness/process_temp.hpp"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>

#include "harness/file_tree.hpp"

namespace kvbench::harness {
namespace fs = std::filesystem;

namespace {

std::string prefix_of(const std::string& kind) { return "kvbench-" + kind + "-"; }

bool process_is_gone(const std::string& digits) {
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  const pid_t pid = static_cast<pid_t>(std::stol(digits));
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

void remove_orphaned_temps(const std::string& kind) {
  const std::string prefix = prefix_of(kind);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const size_t end = name.find('-', prefix.size());
    if (end != std::string::npos && process_is_gone(name.substr(prefix.size(), end - prefix.size())))
      remove_tree(entry.path().string());
  }
}

std::string make_process_temp(const std::string& kind, bool folder) {
  remove_orphaned_temps(kind);
  std::string pattern =
      (fs::temp_directory_path() / (prefix_of(kind) + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (folder) {
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create the temporary folder " + pattern);
  } else {
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("cannot create the temporary file " + pattern);
    ::close(fd);
  }
  return pattern;
}

}  // namespace kvbench::harness
