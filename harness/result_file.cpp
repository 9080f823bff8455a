#include "harness/result_file.hpp"

#include <filesystem>

#include "datasets/json_parse.hpp"
#include "harness/job_id.hpp"

namespace kvbench::harness {

std::string result_json_problem(const nlohmann::json& result, const std::string& id) {
  if (!result.is_object()) return "not a JSON object";
  if (!result.contains("id") || !result["id"].is_string()) return "no string field 'id'";
  if (!id.empty() && result["id"] != id) return "its id is " + result["id"].get<std::string>() + ", not " + id;
  if (!result.contains("spec") || !result["spec"].is_object()) return "no object field 'spec'";
  if (!result.contains("metrics") || !result["metrics"].is_object()) return "no object field 'metrics'";
  if (result.contains("examples") && !result["examples"].is_array()) return "field 'examples' is not a list";
  return "";
}

std::string result_file_problem(const std::string& path, const std::string& id) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return "no result file";
  try {
    return result_json_problem(datasets::read_json_file(path), id);
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string result_job_key(const nlohmann::json& result) {
  const nlohmann::json sums = result.value("checksums", nlohmann::json());
  const bool hashable = sums.is_object() && sums.contains("model") && sums["model"].is_string() &&
                        sums.contains("dataset") && sums["dataset"].is_string();
  return hashable ? job_id(result["spec"], sums) : result["id"].get<std::string>();
}

}  // namespace kvbench::harness
