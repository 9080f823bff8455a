#include "datasets/python_format.hpp"

#include <stdexcept>

namespace kvbench::datasets {

std::string python_format(const std::string& format, const std::map<std::string, std::string>& values) {
  std::string out;
  out.reserve(format.size());
  for (std::size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if (c == '}') {
      if (i + 1 < format.size() && format[i + 1] == '}') {
        out.push_back('}');
        ++i;
        continue;
      }
      throw std::invalid_argument("format string: single '}' at byte " + std::to_string(i));
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    const std::size_t close = format.find('}', i);
    if (close == std::string::npos) throw std::invalid_argument("format string: '{' at byte " + std::to_string(i) + " is never closed");
    const std::string field = format.substr(i + 1, close - i - 1);
    const auto it = values.find(field);
    if (it == values.end()) throw std::invalid_argument("format string: no value for the field {" + field + "}");
    out += it->second;
    i = close;
  }
  return out;
}

}  // namespace kvbench::datasets
