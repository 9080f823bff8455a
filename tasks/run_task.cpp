#include "tasks/run_task.hpp"

#include "base/param_listing.hpp"

#include <sys/resource.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "datasets/data_root.hpp"
#include "datasets/sha256.hpp"
#include "models/device_memory.hpp"
#include "models/device_options.hpp"
#include "models/job_clock.hpp"
#include "models/model_loader.hpp"
#include "models/weight_checks.hpp"
#include "policies/budget.hpp"
#include "policies/registry.hpp"
#include "tasks/scored_mean.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

const nlohmann::json& spec_defaults() {
  static const nlohmann::json defaults = {
      {"model", "stories260K"}, {"tokenizer", ""},        {"task", ""},       {"task_params", nlohmann::json::object()},
      {"policy", "full"},       {"policy_params", nlohmann::json::object()}, {"budget", "full"},
      {"protocol", "oneshot"},  {"block", 1},             {"seed", 0},        {"limit", 0},
      {"device", "cpu"},        {"dtype", "auto"},        {"data_root", ""}};
  return defaults;
}

// A loaded model stays in memory for the process: a grid worker runs many jobs on one model.
struct LoadedEntry {
  models::LoadedModel loaded;
  std::unique_ptr<models::Transformer> transformer;
  std::unique_ptr<models::Tokenizer> tokenizer;
};

LoadedEntry& load_cached(const nlohmann::json& spec) {
  static std::map<std::string, std::unique_ptr<LoadedEntry>> cache;
  static std::mutex mutex;
  const std::string key = spec["model"].get<std::string>() + "|" + spec["tokenizer"].get<std::string>() + "|" +
                          spec["device"].get<std::string>() + "|" + spec["dtype"].get<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[key];
  if (!slot) {
    auto entry = std::make_unique<LoadedEntry>();
    entry->loaded = models::load_model(spec["model"], spec["tokenizer"]);
    const torch::Device device = models::parse_device(spec["device"]);
    if (device.is_cuda() && !torch::cuda::is_available()) throw std::runtime_error("device cuda: no CUDA device available");
    const torch::ScalarType dtype = models::parse_dtype(spec["dtype"], device);
    entry->transformer = std::make_unique<models::Transformer>(entry->loaded.config,
                                                               models::to_device(entry->loaded.weights, device, dtype));
    entry->tokenizer = std::make_unique<models::Tokenizer>(entry->loaded.tokenizer_path);
    models::check_tokenizer_vocab(entry->tokenizer->vocab_size(), entry->loaded);
    slot = std::move(entry);
  }
  return *slot;
}

// sha256 of a file, remembered per (path, size, mtime) so grids do not hash the same data again.
std::string file_checksum(const std::string& path) {
  static std::map<std::tuple<std::string, uintmax_t, int64_t>, std::string> memo;
  static std::mutex mutex;
  std::error_code unreadable;  // sha256_file names the file
  const uintmax_t size = std::filesystem::file_size(path, unreadable);
  const int64_t modified = std::filesystem::last_write_time(path, unreadable).time_since_epoch().count();
  const auto key = std::make_tuple(path, size, modified);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = memo.find(key);
  if (it != memo.end()) return it->second;
  return memo[key] = datasets::sha256_file(path);
}

std::string combined_checksum(const std::vector<std::string>& files) {
  std::string joined;
  for (const auto& f : files) joined += file_checksum(f) + "\n";
  return datasets::sha256_hex(joined);
}

// The files the policy's parameters name (a learned press's published artefacts), a folder as
// every regular file under it, in path order; a path that does not exist is the policy's to refuse.
std::vector<std::string> policy_files(const nlohmann::json& spec) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  const nlohmann::json& given = spec["policy_params"];
  for (const params::Param& p : policies::policy_params(spec["policy"], given)) {
    const auto value = given.find(p.name);
    if (!p.names_file || value == given.end() || !value->is_string() || value->get<std::string>().empty()) continue;
    const fs::path path = value->get<std::string>();
    std::vector<std::string> found;
    if (fs::is_directory(path)) {
      for (const fs::directory_entry& e : fs::recursive_directory_iterator(path))
        if (e.is_regular_file()) found.push_back(e.path().string());
    } else if (fs::is_regular_file(path)) {
      found.push_back(path.string());
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

TaskContext make_context(const nlohmann::json& spec, const Task& task, LoadedEntry* entry) {
  TaskContext ctx;
  ctx.declared = task.parameters();
  if (entry) {
    ctx.model = entry->transformer.get();
    ctx.tokenizer = entry->tokenizer.get();
  }
  ctx.model_name = spec["model"];
  ctx.policy_name = spec["policy"];
  ctx.policy_params = spec["policy_params"];
  ctx.budget = spec["budget"];
  ctx.protocol = spec["protocol"];
  ctx.block = spec["block"];
  ctx.seed = spec["seed"];
  ctx.limit = spec["limit"];
  ctx.params = spec["task_params"];
  ctx.data_root = spec["data_root"].get<std::string>().empty() ? datasets::default_data_root() : spec["data_root"].get<std::string>();
  return ctx;
}

// A count field of a job spec: an integer >= `min`. A float (2.7) or a number beyond int64 would be
// truncated where it is read, running another job's numbers under its own id. Seeds may use the
// whole uint64 range (torch::manual_seed takes one).
void require_integer(const nlohmann::json& value, const std::string& field, int64_t min) {
  // JSON readers give a non-negative integer as unsigned, a negative one as signed.
  const bool fits = value.is_number_unsigned()
                        ? value.get<uint64_t>() >= static_cast<uint64_t>(min) &&
                              (field == "seed" || value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
                        : value.is_number_integer() && value.get<int64_t>() >= min;
  if (!fits)
    throw std::invalid_argument("job spec: field '" + field + "' must be an integer >= " + std::to_string(min) +
                                (field == "seed" ? "" : " (at most 2^63 - 1)") + ", got " + value.dump());
}

}  // namespace

nlohmann::json task_settings(const Task& task, const nlohmann::json& resolved) {
  nlohmann::json settings = task.settings();
  settings["params"] = params::describe(task.parameters());
  if (!resolved.is_null()) settings["resolved"] = resolved;
  return settings;
}

nlohmann::json normalize_job_spec(const nlohmann::json& spec) {
  if (!spec.is_object()) throw std::invalid_argument("job spec must be a JSON object");
  nlohmann::json out = spec_defaults();
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    if (!out.contains(it.key())) throw std::invalid_argument("job spec: unknown field '" + it.key() + "'");
    const auto& def = out[it.key()];
    if (def.is_number() != it.value().is_number() || (def.is_string() && !it.value().is_string()) ||
        (def.is_object() && !it.value().is_object()))
      throw std::invalid_argument("job spec: field '" + it.key() + "' must be " + def.type_name() + ", got " +
                                  it.value().dump());
    out[it.key()] = it.value();
  }
  if (out["task"].get<std::string>().empty()) throw std::invalid_argument("job spec: field 'task' is required");
  const auto task = make_task(out["task"]);  // the name, then its parameters
  params::check({"task '" + out["task"].get<std::string>() + "'", "task_params"}, task->parameters(), out["task_params"]);
  task->check_params(out["task_params"]);
  out["policy_params"] = policies::resolved_params(out["policy"], out["policy_params"]);
  policies::make_policy(out["policy"], out["policy_params"]);  // the policy's own range checks, up front
  models::validate_device_and_dtype(out["device"], out["dtype"]);
  try {
    out["budget"] = policies::Budget::parse(out["budget"]).to_string();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("job spec: field 'budget': ") + e.what());  // so the file's line is found
  }
  models::parse_protocol(out["protocol"]);
  require_integer(out["block"], "block", 1);
  require_integer(out["limit"], "limit", 0);
  require_integer(out["seed"], "seed", 0);
  return out;
}

nlohmann::json job_checksums(const nlohmann::json& raw_spec) {
  nlohmann::json spec = normalize_job_spec(raw_spec);
  models::LoadedModel probe = models::locate_model(spec["model"], spec["tokenizer"]);
  std::vector<std::string> model_files = probe.weight_files;
  model_files.push_back(probe.tokenizer_path);
  auto task = make_task(spec["task"]);
  TaskContext ctx = make_context(spec, *task, nullptr);
  nlohmann::json checksums = {{"model", combined_checksum(model_files)}, {"dataset", combined_checksum(task->data_files(ctx))}};
  if (const std::vector<std::string> artefacts = policy_files(spec); !artefacts.empty()) checksums["policy"] = combined_checksum(artefacts);
  return checksums;
}

nlohmann::json run_task(const nlohmann::json& raw_spec, const ProgressFn& progress) {
  nlohmann::json spec = normalize_job_spec(raw_spec);
  auto start = models::JobClock::now();
  LoadedEntry& entry = load_cached(spec);
  const torch::Device device = entry.transformer->device();
  models::restart_device_peak(device);  // a CUDA job's allocator peak is its own, not the job's before
  auto task = make_task(spec["task"]);
  TaskContext ctx = make_context(spec, *task, &entry);
  ctx.progress = progress;
  torch::manual_seed(spec["seed"].get<uint64_t>());
  TaskOutput out = task->run(ctx);
  require_scored(spec["task"].get<std::string>(), static_cast<int64_t>(out.examples.size()), skipped_counters(out.metrics));
  require_finite(spec["task"].get<std::string>(), out.metrics);
  nlohmann::json result = {{"task", spec["task"]},
                           {"model", spec["model"]},
                           {"policy", spec["policy"]},
                           {"policy_params", spec["policy_params"]},
                           {"budget", spec["budget"]},
                           {"protocol", spec["protocol"]},
                           {"settings", task_settings(*task, out.resolved)},
                           {"metrics", std::move(out.metrics)},
                           {"examples", std::move(out.examples)}};
  nlohmann::json timings = ctx.meter->timings();
  timings["seconds"] = std::chrono::duration<double>(models::JobClock::now() - start).count();
  result["timings"] = timings;
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  // CUDA: the caching allocator's peak of live tensors during the job (weights included, as
  // torch.cuda.max_memory_allocated). CPU: the process's peak resident set, which bounds it.
  const std::optional<models::DevicePeak> device_peak = models::device_peak(device);
  result["memory"] = {{"kv_logical_bytes_peak", ctx.meter->kv_logical_bytes_peak},
                      {"kv_allocated_bytes_peak", ctx.meter->kv_allocated_bytes_peak},
                      {"max_cache_len", ctx.meter->max_cache_len},
                      {"allocator_peak_bytes", device_peak ? device_peak->allocated_bytes
                                                           : static_cast<int64_t>(usage.ru_maxrss) * 1024}};
  return result;
}

}  // namespace kvbench::tasks
