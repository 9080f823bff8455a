#pragma once
// The unknown-field rule of every JSON file a user writes (specs, overrides, score inputs): a key
// outside the accepted ones is an error, so a typo never silently drops a setting.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kvbench::base {

// Throws std::invalid_argument "<origin>: <path>.<key>: unknown field (expected one of: a, b)" for
// the first key of `object` not in `accepted` (path "" for a top-level object).
void require_known_fields(const nlohmann::json& object, const std::vector<std::string>& accepted, const std::string& origin,
                          const std::string& path = "");

}  // namespace kvbench::base
