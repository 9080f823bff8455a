#include "tasks/python_str.hpp"

namespace kvbench::tasks {

std::string strip(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t begin = s.find_first_not_of(ws);
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(ws) - begin + 1);
}

}  // namespace kvbench::tasks
