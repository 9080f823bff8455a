// `kvbench run`: one job (one cell of a results table), from options or a job spec file. Prints
// the result (a summary, or the whole result object with --json) and stores it as
// <results>/<id>.json unless --no-store. A stored result is reused unless --force.
#include <iomanip>
#include <memory>
#include <iostream>
#include <sstream>

#include "datasets/json_parse.hpp"
#include "harness/command.hpp"
#include "harness/error_message.hpp"
#include "harness/job_runner.hpp"
#include "harness/job_spec.hpp"
#include "harness/progress_bar.hpp"
#include "harness/results_store.hpp"
#include "harness/runtime_options.hpp"
#include "harness/worker_pool.hpp"

namespace kvbench::harness {
namespace {

struct RunArgs {
  ModelOptions model;
  PolicyOptions policy;
  std::string task;
  std::string task_params = "{}";
  int64_t limit = 0;
  std::string data_root;
  std::string job_file;
  std::string results = "results/runs";
  bool json = false;
  bool no_store = false;
  bool force = false;
  bool quiet = false;
};

nlohmann::json parse_object(const std::string& text, const std::string& option) {
  nlohmann::json parsed;
  try {
    parsed = datasets::parse_json(text, option);
  } catch (const datasets::DataError& e) {
    throw std::invalid_argument(e.what());
  }
  if (!parsed.is_object()) throw std::invalid_argument(option + " must be a JSON object, got " + text);
  return parsed;
}

nlohmann::json spec_from_options(const RunArgs& a) {
  if (a.task.empty()) throw std::invalid_argument("kvbench run: give --task (or --job FILE)");
  nlohmann::json spec = {{"model", a.model.model},       {"tokenizer", a.model.tokenizer},
                         {"device", a.model.device},     {"dtype", a.model.dtype},
                         {"task", a.task},               {"task_params", parse_object(a.task_params, "--task-params")},
                         {"policy", a.policy.policy},    {"policy_params", parse_object(a.policy.params, "--policy-params")},
                         {"budget", a.policy.budget},    {"protocol", a.policy.protocol},
                         {"block", a.policy.block},      {"seed", a.policy.seed},
                         {"limit", a.limit}};
  if (!a.data_root.empty()) spec["data_root"] = a.data_root;
  return spec;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  std::ostringstream s;
  s << std::fixed << std::setprecision(u == 0 ? 0 : 1) << bytes << " " << units[u];
  return s.str();
}

void print_summary(const nlohmann::json& result, const std::string& path) {
  std::cout << "job " << result["id"].get<std::string>() << "  " << short_description(result["spec"]) << "\n";
  const nlohmann::json& metrics = result["metrics"];
  for (auto it = metrics.begin(); it != metrics.end(); ++it)
    if (it->is_primitive()) std::cout << "  " << std::left << std::setw(24) << it.key() << " " << it->dump() << "\n";
  const nlohmann::json timings = result.value("timings", nlohmann::json::object());
  const nlohmann::json memory = result.value("memory", nlohmann::json::object());
  std::cout << "  examples " << result["examples"].size();
  if (timings.contains("seconds")) std::cout << "  time " << std::setprecision(3) << timings["seconds"].get<double>() << " s";
  for (const char* key : {"prefill_tokens_per_s", "decode_tokens_per_s"})
    if (timings.contains(key) && timings[key].is_number() && timings[key].get<double>() > 0)
      std::cout << "  " << key << " " << std::fixed << std::setprecision(0) << timings[key].get<double>()
                << std::defaultfloat;
  if (memory.contains("kv_logical_bytes_peak"))
    std::cout << "  kv peak " << human_bytes(memory["kv_logical_bytes_peak"].get<double>());
  std::cout << "\n";
  if (!path.empty()) std::cout << "result " << path << "\n";
}

int run_job_command(const RunArgs& args) {
  Job job = args.job_file.empty() ? make_job(spec_from_options(args)) : load_job_file(args.job_file);
  const bool show_progress = !args.quiet && ProgressBar::stderr_is_terminal();
  std::unique_ptr<ProgressBar> bar;
  auto progress = [&](int64_t done, int64_t total) {
    if (!show_progress) return;
    if (!bar) bar = std::make_unique<ProgressBar>(std::cerr, total, true);
    bar->update(static_cast<double>(done), "examples");
  };
  nlohmann::json result;
  std::string path;
  if (args.no_store) {
    result = execute_job(job, progress);
  } else {
    ResultsStore store(args.results);
    path = store.result_path(job.id);
    if (store.has_result(job.id) && !args.force) {
      result = store.read_result(job.id);
      if (!args.quiet) std::cerr << "kvbench run: reusing " << path << " (--force runs it again)\n";
    } else {
      std::optional<JobClaim> claim = store.try_claim(job.id);
      if (!claim)
        throw std::runtime_error("job " + job.id + " is being run by another process " +
                                 store.claim_holder(job.id).dump() + " (" + store.claim_path(job.id) + ")");
      try {
        result = execute_job(job, progress);
      } catch (const std::exception& e) {
        store.log_failure(job.id, user_message(e));
        throw;
      }
      store.write_result(result);
    }
  }
  if (bar) bar->finish();
  if (args.json)
    std::cout << result.dump() << "\n";
  else
    print_summary(result, path);
  return 0;
}

const CommandRegistration run_registration(
    "run", "Run one job (one cell of a results table) and store its result as <results>/<id>.json",
    [](CLI::App& app) {
      auto args = std::make_shared<RunArgs>();
      auto* job = app.add_option("--job", args->job_file, "a job spec file (JSON; see docs/harness.md)");
      std::vector<CLI::Option*> spec_options;
      spec_options.push_back(app.add_option("--task", args->task, "task name (kvbench tasks lists them)"));
      spec_options.push_back(app.add_option("--task-params", args->task_params, "task parameters as a JSON object"));
      spec_options.push_back(app.add_option("--limit", args->limit, "at most this many examples (0 = all)")->check(at_least(0)));
      spec_options.push_back(app.add_option("--data-root", args->data_root, "datasets folder (default ../shared/data)"));
      const size_t before = app.get_options().size();
      args->model.add_to(app);
      args->policy.add_to(app);
      const auto all = app.get_options();
      for (size_t i = before; i < all.size(); ++i) spec_options.push_back(const_cast<CLI::Option*>(all[i]));
      for (CLI::Option* option : spec_options) job->excludes(option);
      app.add_option("--results", args->results, "results directory")->capture_default_str();
      app.add_flag("--json", args->json, "print the whole result object (JSON)");
      app.add_flag("--no-store", args->no_store, "do not write the result file");
      app.add_flag("--force", args->force, "run again even if the result file exists (it is replaced)");
      app.add_flag("--quiet", args->quiet, "no progress or notes on stderr");
      return [args] { return run_job_command(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
