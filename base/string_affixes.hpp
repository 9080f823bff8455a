#pragma once
// Prefix and suffix tests (C++20's std::string::starts_with / ends_with) for this C++17 code base.
#include <string_view>

namespace kvbench::base {

inline bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace kvbench::base
