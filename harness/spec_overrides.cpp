#include "harness/spec_overrides.hpp"

#include <stdexcept>

#include "base/known_fields.hpp"
#include "datasets/json_parse.hpp"
#include "harness/table_spec.hpp"

namespace kvbench::harness {
namespace {

void check_object(const nlohmann::json& object, const std::vector<std::string>& allowed, const std::string& origin,
                  const std::string& path) {
  if (!object.is_object()) throw std::invalid_argument(origin + (path.empty() ? "" : ": " + path) + ": must be an object");
  base::require_known_fields(object, allowed, origin, path);
}

}  // namespace

SpecOverrides SpecOverrides::load(const std::string& path) {
  const nlohmann::json file = datasets::read_json_file(path);
  check_object(file, {"about", "specs"}, path, "");
  if (!file.contains("specs")) throw std::invalid_argument(path + ": specs: required field is missing");
  SpecOverrides out;
  out.path_ = path;
  for (auto it = file["specs"].begin(); it != file["specs"].end(); ++it) {
    const std::string where = path + ": specs." + it.key();
    check_object(it.value(), {"set", "why"}, path, "specs." + it.key());
    if (it.value().contains("why") && !it.value()["why"].is_string()) throw std::invalid_argument(where + ".why: must be a string");
    out.specs_[it.key()] = check_job_fields(it.value().value("set", nlohmann::json::object()), where + ".set");
  }
  return out;
}

nlohmann::json SpecOverrides::for_spec(const std::string& spec_id, const nlohmann::json& command_line) const {
  if (path_.empty()) return command_line;
  if (!specs_.contains(spec_id))
    throw std::invalid_argument(path_ + ": specs: no entry for table spec '" + spec_id + "' (add one, {\"set\": {}} for none)");
  nlohmann::json out = specs_[spec_id];
  out.update(command_line, /*merge_objects=*/true);
  return out;
}

}  // namespace kvbench::harness
