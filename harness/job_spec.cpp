#include "harness/job_spec.hpp"

#include <regex>
#include <stdexcept>
#include <type_traits>

#include "datasets/field_location.hpp"
#include "datasets/json_parse.hpp"
#include "harness/atomic_file.hpp"
#include "harness/job_id.hpp"
#include "policies/registry.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::harness {

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

void rethrow_with_location(const std::exception& error, const std::string& path, const std::string& text, size_t from) {
  std::string message = error.what();
  if (message.rfind(path + ": ", 0) == 0) message = message.substr(path.size() + 2);  // named once, with its line
  static const std::regex field_pattern("field '([^']+)'");
  std::smatch match;
  const std::string location = std::regex_search(message, match, field_pattern) ? datasets::field_location(path, text, match[1].str(), from) : path;
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

namespace {

// A field of a spec for display, or `fallback` when it is missing or of another type: the
// description of a spec that was never normalised must not throw.
template <class T>
T shown(const nlohmann::json& spec, const char* key, T fallback) {
  const auto it = spec.find(key);
  if (it == spec.end()) return fallback;
  if constexpr (std::is_same_v<T, std::string>) return it->is_string() ? it->template get<std::string>() : fallback;
  else return it->is_number_integer() ? it->template get<T>() : fallback;
}

}  // namespace

std::string short_description(const nlohmann::json& spec) {
  if (!spec.is_object()) return "?";
  std::string policy = shown<std::string>(spec, "policy", "full");
  nlohmann::json params = spec.contains("policy_params") ? spec["policy_params"] : nlohmann::json::object();
  if (!params.is_object()) params = nlohmann::json::object();
  std::string changed;
  try {
    const nlohmann::json defaults = policies::resolved_params(policy, nlohmann::json::object());
    for (auto it = params.begin(); it != params.end(); ++it)
      if (!defaults.contains(it.key()) || defaults[it.key()] != it.value())
        changed += (changed.empty() ? "" : ",") + it.key() + "=" + it.value().dump();
  } catch (const std::exception&) {
    changed = params.empty() ? "" : params.dump();
  }
  if (!changed.empty()) policy += "{" + changed + "}";
  const std::string protocol = shown<std::string>(spec, "protocol", "oneshot");
  std::string out = shown<std::string>(spec, "task", "?") + " " + policy + " @" +
                    shown<std::string>(spec, "budget", "full") + " " + protocol;
  const int64_t block = shown<int64_t>(spec, "block", 1);
  if (protocol == "stream" && block != 1) out += "/b" + std::to_string(block);
  const std::string model = shown<std::string>(spec, "model", "stories260K");
  if (model != "stories260K") out += " model=" + model;
  out += " seed=" + std::to_string(shown<int64_t>(spec, "seed", 0));
  const int64_t limit = shown<int64_t>(spec, "limit", 0);
  if (limit != 0) out += " limit=" + std::to_string(limit);
  const auto task_params = spec.find("task_params");
  if (task_params != spec.end() && !task_params->empty()) out += " " + task_params->dump();
  return out;
}

}  // namespace kvbench::harness
