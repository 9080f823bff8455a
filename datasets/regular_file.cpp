#include "datasets/regular_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kvbench::datasets {

std::string non_regular_kind(const std::string& path) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0) return "";
  if (S_ISREG(s.st_mode)) return "";
  if (S_ISFIFO(s.st_mode)) return "a FIFO";
  if (S_ISDIR(s.st_mode)) return "a directory";
  if (S_ISCHR(s.st_mode)) return "a character device";
  if (S_ISBLK(s.st_mode)) return "a block device";
  if (S_ISSOCK(s.st_mode)) return "a socket";
  return "not a plain file";
}

void require_regular_file(const std::string& path, const std::string& what) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0)
    throw std::runtime_error(path + ": cannot open " + what + ": " + std::strerror(errno));
  if (!S_ISREG(s.st_mode))
    throw std::runtime_error(path + ": the " + what + " must be a regular file, this is " + non_regular_kind(path));
}

std::string read_regular_file(const std::string& path, const std::string& what) {
  require_regular_file(path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open " + what);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error(path + ": read error");
  return text.str();
}

}  // namespace kvbench::datasets
