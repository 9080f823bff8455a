#include "datasets/field_location.hpp"

#include <algorithm>

namespace kvbench::datasets {

std::string field_location(const std::string& origin, std::string_view text, const std::string& field, size_t from) {
  const size_t at = text.find("\"" + field + "\"", from);
  if (at == std::string_view::npos) return origin;
  return origin + ":" + std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

}  // namespace kvbench::datasets
