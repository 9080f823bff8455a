#include "harness/plain_name.hpp"

#include <algorithm>
#include <cctype>

namespace kvbench::harness {

bool is_plain_name(const std::string& name) {
  return !name.empty() && name.size() <= 100 && std::isalnum(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         });
}

}  // namespace kvbench::harness
