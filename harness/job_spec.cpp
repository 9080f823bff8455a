#include "harness/job_spec.hpp"

#include <regex>
#include <stdexcept>

#include "datasets/json_parse.hpp"
#include "harness/atomic_file.hpp"
#include "harness/job_id.hpp"
#include "policies/registry.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::harness {
namespace {

int line_of_offset(const std::string& text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < std::min(offset, text.size()); ++i)
    if (text[i] == '\n') ++line;
  return line;
}

}  // namespace

Job make_job(const nlohmann::json& raw) {
  Job job;
  job.spec = tasks::normalize_job_spec(raw);
  job.checksums = tasks::job_checksums(job.spec);
  job.id = job_id(job.spec, job.checksums);
  return job;
}

nlohmann::json read_json_file(const std::string& path) {
  try {
    return datasets::read_json_file(path);
  } catch (const datasets::DataError& e) {
    throw std::invalid_argument(e.what());
  }
}

void rethrow_with_location(const std::exception& error, const std::string& path, const std::string& text) {
  const std::string message = error.what();
  static const std::regex field_pattern("field '([^']+)'");
  std::smatch match;
  std::string location = path;
  if (std::regex_search(message, match, field_pattern)) {
    const size_t at = text.find("\"" + match[1].str() + "\"");
    if (at != std::string::npos) location += ":" + std::to_string(line_of_offset(text, at));
  }
  throw std::invalid_argument(location + ": " + message);
}

Job load_job_file(const std::string& path) {
  nlohmann::json raw = read_json_file(path);
  try {
    return make_job(raw);
  } catch (const std::invalid_argument& e) {
    rethrow_with_location(e, path, read_file(path));
  }
}

std::string short_description(const nlohmann::json& spec) {
  std::string policy = spec.value("policy", "full");
  const nlohmann::json params = spec.value("policy_params", nlohmann::json::object());
  std::string changed;
  try {
    const nlohmann::json& defaults = policies::policy_info(policy).defaults;
    for (auto it = params.begin(); it != params.end(); ++it)
      if (!defaults.contains(it.key()) || defaults[it.key()] != it.value())
        changed += (changed.empty() ? "" : ",") + it.key() + "=" + it.value().dump();
  } catch (const std::exception&) {
    changed = params.empty() ? "" : params.dump();
  }
  if (!changed.empty()) policy += "{" + changed + "}";
  std::string out = spec.value("task", "?") + " " + policy + " @" + spec.value("budget", "full") + " " +
                    spec.value("protocol", "oneshot");
  if (spec.value("protocol", "") == "stream" && spec.value("block", 1) != 1)
    out += "/b" + std::to_string(spec.value("block", 1));
  if (spec.value("model", "stories260K") != "stories260K") out += " model=" + spec.value("model", "");
  out += " seed=" + std::to_string(spec.value("seed", 0));
  if (spec.value("limit", 0) != 0) out += " limit=" + std::to_string(spec.value("limit", 0));
  const nlohmann::json task_params = spec.value("task_params", nlohmann::json::object());
  if (!task_params.empty()) out += " " + task_params.dump();
  return out;
}

}  // namespace kvbench::harness
