#include "base/known_fields.hpp"

#include <algorithm>
#include <stdexcept>

namespace kvbench::base {

void require_known_fields(const nlohmann::json& object, const std::vector<std::string>& accepted, const std::string& origin,
                          const std::string& path) {
  if (!object.is_object()) return;  // the caller's type check names what the value must be
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(accepted.begin(), accepted.end(), it.key()) != accepted.end()) continue;
    std::string list;
    for (const auto& a : accepted) list += (list.empty() ? "" : ", ") + a;
    throw std::invalid_argument(origin + ": " + (path.empty() ? it.key() : path + "." + it.key()) +
                                ": unknown field (expected one of: " + list + ")");
  }
}

}  // namespace kvbench::base
