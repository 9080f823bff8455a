#include "tokenizers/generation_config.hpp"

#include <nlohmann/json.hpp>

#include "tokenizers/model_error.hpp"
#include "tokenizers/model_json.hpp"

namespace kvbench::models {

std::vector<int> read_generation_eos_ids(const std::string& path) {
  const nlohmann::json j = read_model_json(path, "generation_config.json");
  if (!j.is_object()) throw ModelLoadError(path, "must be a JSON object");
  if (!j.contains("eos_token_id") || j["eos_token_id"].is_null()) return {};
  const nlohmann::json& v = j["eos_token_id"];
  auto id_of = [&path](const nlohmann::json& x) {
    if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() > INT32_MAX)
      throw ModelLoadError(path, "eos_token_id: must be a non-negative integer or a list of them, got " + x.dump().substr(0, 80));
    return x.get<int>();
  };
  std::vector<int> ids;
  if (v.is_array()) {
    for (const auto& x : v) ids.push_back(id_of(x));
  } else {
    ids.push_back(id_of(v));
  }
  return ids;
}

}  // namespace kvbench::models
