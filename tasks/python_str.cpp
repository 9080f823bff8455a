#include "tasks/python_str.hpp"

#include <stdexcept>

namespace kvbench::tasks {

std::string strip(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t begin = s.find_first_not_of(ws);
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(ws) - begin + 1);
}

std::string python_format(const std::string& format, const std::function<std::string(const std::string&)>& field) {
  std::string out;
  out.reserve(format.size() + 4096);
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    const bool doubled = i + 1 < format.size() && format[i + 1] == c;
    if ((c == '{' || c == '}') && doubled) {
      out += c;
      ++i;
    } else if (c == '{') {
      const size_t close = format.find('}', i);
      if (close == std::string::npos)
        throw std::invalid_argument("prompt template: single '{' encountered at offset " + std::to_string(i));
      const std::string inside = format.substr(i + 1, close - i - 1);
      const std::string name = inside.substr(0, inside.find_first_of(":!"));
      const std::string value = field(name);  // Python looks the field up before its spec
      if (name.size() != inside.size())
        throw std::invalid_argument("prompt template: field '{" + inside + "}' has a conversion or format spec (not supported)");
      out += value;
      i = close;
    } else if (c == '}') {
      throw std::invalid_argument("prompt template: single '}' encountered at offset " + std::to_string(i));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace kvbench::tasks
