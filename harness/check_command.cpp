// `kvbench check GRID --baseline FILE [--update]`: the nightly accuracy check
// (harness/check_baseline.hpp). The grid runs into a fresh temporary results directory, or into
// --results DIR, which must be new or empty (unless --reuse-results), so a stale result of older
// code can never pass for a current one.

#include <filesystem>
#include <iostream>

#include "harness/atomic_file.hpp"
#include "harness/check_baseline.hpp"
#include "harness/command.hpp"
#include "harness/file_tree.hpp"
#include "harness/grid_runner.hpp"
#include "harness/grid_spec.hpp"
#include "harness/process_temp.hpp"

namespace kvbench::harness {
namespace {
namespace fs = std::filesystem;

struct CheckArgs {
  std::string grid_file;
  std::string baseline_file;
  std::string results;
  bool update = false;
  bool verbose = false;
  bool quiet = false;
  bool reuse_results = false;
  int workers = 1;
};

int run_check(const CheckArgs& args) {
  Grid grid = load_grid(args.grid_file);
  nlohmann::json previous;
  if (!args.update || fs::exists(args.baseline_file)) {
    previous = read_json_file(args.baseline_file);
    try {
      validate_baseline(previous, args.baseline_file);
    } catch (const std::invalid_argument& e) {
      rethrow_with_location(e, args.baseline_file, read_file(args.baseline_file));
    }
    // Compared by file name: the baseline records the path as given, from wherever it was run.
    const std::string recorded = previous.value("grid", "");
    if (!args.update && !recorded.empty() && fs::path(recorded).filename() != fs::path(args.grid_file).filename())
      throw std::invalid_argument(args.baseline_file + ": field 'grid': this baseline was recorded for " + recorded +
                                  ", not " + args.grid_file);
  }
  std::string results = args.results;
  bool temporary = false;
  if (!results.empty() && !args.reuse_results) {
    // The check never reuses a result: a directory that already holds files could pass stale
    // numbers of older code for current ones.
    std::error_code ec;
    if (fs::exists(results, ec) && (!fs::is_directory(results, ec) || !fs::is_empty(results, ec)))
      throw std::invalid_argument("--results " + results + ": must be a new or empty directory (kvbench check "
                                  "never reuses results; remove it or name another)");
  }
  if (results.empty()) {
    results = make_process_temp("check", /*folder=*/true);
    temporary = true;
  }
  ResultsStore store(results);
  std::vector<Job> jobs;
  for (const auto& cell : grid.cells) jobs.push_back(cell.job);
  PoolOptions pool;
  pool.workers = args.workers;
  GridRunSummary summary = run_grid_jobs(jobs, store, pool, args.quiet);

  std::vector<CurrentCell> current;
  for (const auto& cell : grid.cells) {
    CurrentCell c{cell.raw, short_description(cell.job.spec), cell.job.id, nullptr, ""};
    if (store.has_result(cell.job.id))
      c.metrics = store.read_result(cell.job.id).at("metrics");
    else if (summary.failed.count(cell.job.id))
      c.error = summary.failed.at(cell.job.id);
    current.push_back(std::move(c));
  }
  if (temporary) remove_tree(results);

  if (args.update) {
    nlohmann::json baseline = make_baseline(args.grid_file, current, previous);
    write_file_atomically(args.baseline_file, baseline.dump(2) + "\n");
    std::cout << "baseline " << args.baseline_file << ": " << current.size() << " cells recorded\n";
    return 0;
  }
  CheckReport report = compare_to_baseline(previous, current);
  std::cout << report.render(args.verbose);
  return report.passed() ? 0 : 1;
}

const CommandRegistration check_registration(
    "check", "Run a fixed grid and compare its metrics with a committed baseline (the nightly check)",
    [](CLI::App& app) {
      auto args = std::make_shared<CheckArgs>();
      app.add_option("grid", args->grid_file, "grid spec, e.g. grids/nightly.json")->required();
      app.add_option("--baseline", args->baseline_file, "baseline file, e.g. results/baselines/nightly.json")->required();
      app.add_flag("--update", args->update, "record the current metrics as the baseline (tolerances are kept)");
      app.add_option("--results", args->results, "keep the results here: a new or empty directory (default: a temporary one)");
      app.add_option("--workers", args->workers, "local worker processes")->capture_default_str()->check(CLI::Range(1, 1024));
      app.add_flag("--reuse-results", args->reuse_results,
                   "accept a --results directory that already holds results and reuse them (to compare one "
                   "fresh run with another baseline; never for a real check)");
      app.add_flag("--verbose,-v", args->verbose, "show every metric of every cell");
      app.add_flag("--quiet", args->quiet, "no progress on stderr");
      return [args] { return run_check(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
