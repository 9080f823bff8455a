// `kvbench grid GRID.json`: every job of a grid (harness/grid_spec.hpp), skipping finished ones,
// with N local workers and a progress bar, or handed to Slurm as a job array.
#include <iostream>

#include "harness/command.hpp"
#include "harness/environment_info.hpp"
#include "harness/grid_runner.hpp"
#include "harness/grid_spec.hpp"
#include "harness/result_file.hpp"
#include "harness/runtime_options.hpp"
#include "harness/slurm_backend.hpp"

namespace kvbench::harness {
namespace {

struct GridArgs {
  std::string grid_file;
  std::string results = "results/runs";
  int workers = 1;
  int threads = 0;
  bool dry_run = false;
  bool quiet = false;
  std::string backend = "local";
  SlurmOptions slurm;
  bool submit = false;
  bool no_prefill_sharing = false;
};

int dry_run(const Grid& grid, const ResultsStore& store) {
  int64_t done = 0, running = 0;
  for (const auto& cell : grid.cells) {
    std::string state = "pending";
    const std::string problem = result_file_problem(store.result_path(cell.job.id), cell.job.id);
    if (problem.empty()) {
      state = "done", ++done;
    } else if (problem != "no result file") {
      state = "invalid-result(will run again: " + problem + ")";
    } else if (nlohmann::json holder = store.claim_holder(cell.job.id); !holder.is_null()) {
      state = "running(pid " + holder["pid"].dump() + " on " + holder.value("host", "?") + ")", ++running;
    }
    std::cout << cell.job.id << "  " << state << "  " << short_description(cell.job.spec) << "\n";
  }
  const int64_t total = static_cast<int64_t>(grid.cells.size());
  std::cout << "grid " << grid.name << ": " << total << " jobs, " << done << " done, " << running << " running, "
            << total - done - running << " to run\n";
  return 0;
}

int run_grid_command(GridArgs args) {
  Grid grid = load_grid(args.grid_file);
  ResultsStore store(args.results);
  if (args.dry_run) return dry_run(grid, store);

  std::vector<Job> jobs;
  for (const auto& cell : grid.cells) jobs.push_back(cell.job);

  if (args.backend == "slurm") {
    std::vector<Job> pending;
    for (const Job& job : jobs)
      if (!store.has_result(job.id)) pending.push_back(job);
    if (pending.empty()) {
      std::cout << "grid " << grid.name << ": all " << jobs.size() << " jobs are done; nothing to submit\n";
      return 0;
    }
    if (args.slurm.dir.empty()) args.slurm.dir = "results/slurm/" + grid.name;
    SlurmArray array = write_slurm_array(grid.name, pending, store.dir(), args.slurm);
    std::cout << "slurm job array: " << array.tasks << " tasks (" << jobs.size() - pending.size()
              << " jobs already done)\n  script   " << array.script << "\n  manifest " << array.manifest << "\n";
    if (args.submit) {
      std::cout << "submitted job " << submit_slurm_array(array) << "\n";
    } else {
      std::cout << "submit with: sbatch " << shell_quote(array.script) << "\n";
    }
    std::cout << "then: kvbench collect " << shell_quote(array.dir) << "\n";
    return 0;
  }
  if (args.backend != "local") throw std::invalid_argument("--backend must be local or slurm, got '" + args.backend + "'");

  PoolOptions pool;
  pool.workers = args.workers;
  pool.threads_per_worker = args.threads;
  pool.share_prefill = !args.no_prefill_sharing;
  GridRunSummary summary = run_grid_jobs(jobs, store, pool, args.quiet);
  std::cerr << "grid " << grid.name << ": " << jobs.size() << " jobs: " << summary.already_done << " already done, "
            << summary.ran << " ran, " << summary.by_others << " finished by other processes, "
            << summary.failed.size() << " failed, " << summary.missing.size() << " missing\n"
            << "prefill tokens: computed " << summary.prefill_computed << ", reused " << summary.prefill_reused << "\n"
            << "one-row projections: " << summary.rows_projected << ", " << summary.rows_batched
            << " of them batched with other jobs'\n";
  for (const auto& [id, error] : summary.failed) std::cerr << "  failed " << id << ": " << error << "\n";
  for (const auto& id : summary.missing) std::cerr << "  missing " << id << "\n";
  return summary.complete() ? 0 : 1;
}

const CommandRegistration grid_registration(
    "grid", "Run every job of a grid spec (skipping finished ones) locally or as a Slurm job array", [](CLI::App& app) {
      auto args = std::make_shared<GridArgs>();
      app.add_option("grid", args->grid_file, "grid spec (JSON; see docs/harness.md)")->required();
      app.add_option("--results", args->results, "results directory")->capture_default_str();
      app.add_option("--workers", args->workers, "local worker processes")->capture_default_str()->check(CLI::Range(1, 1024));
      app.add_option("--threads", args->threads, "BLAS threads per worker process, elementwise ops on one (0 = cores / workers)")
          ->check(CLI::Range(0, 4096));
      app.add_flag("--dry-run", args->dry_run, "list the jobs (id, state, spec) without running them");
      app.add_flag("--quiet", args->quiet, "no progress bar or per-job lines");
      app.add_flag("--no-prefill-sharing", args->no_prefill_sharing,
                   "prefill every job's prompts itself (default: jobs that differ only in how they compress share "
                   "each prompt's prefill; results are identical either way)");
      app.add_option("--backend", args->backend, "local or slurm")->capture_default_str();
      app.add_option("--slurm-dir", args->slurm.dir, "slurm: where to write the job array (default results/slurm/<grid>)");
      app.add_flag("--submit", args->submit, "slurm: submit the array with sbatch");
      app.add_option("--max-parallel", args->slurm.max_parallel, "slurm: at most this many array tasks at once")
          ->check(at_least(0));
      app.add_option("--cpus-per-task", args->slurm.cpus_per_task, "slurm: CPUs per array task")->check(at_least(0));
      app.add_option("--time", args->slurm.time_limit, "slurm: time limit per array task (e.g. 02:00:00)");
      app.add_option("--partition", args->slurm.partition, "slurm: partition");
      app.add_option("--sbatch-option", args->slurm.extra_directives, "slurm: extra #SBATCH option (repeatable)");
      app.add_option("--kvbench", args->slurm.executable, "slurm: the kvbench binary the tasks run (default: this one)");
      return [args] { return run_grid_command(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
