// `kvbench grid-worker` (hidden): one worker process of `kvbench grid --workers N`. Runs the
// jobs of a manifest (harness/worker_pool.hpp) and reports events as JSON lines on stdout.
#include <torch/torch.h>

#include <iostream>

#include "harness/command.hpp"
#include "harness/worker_pool.hpp"
#include "models/cpu_threads.hpp"

namespace kvbench::harness {
namespace {

struct WorkerArgs {
  std::string manifest;
  std::string results;
  int threads = 0;
  size_t ring_jobs = 1;
};

int run_worker(const WorkerArgs& args) {
  models::use_cpu_threads(args.threads);  // BLAS threads; elementwise ops on one
  std::vector<Job> jobs = read_job_manifest(args.manifest);
  ResultsStore store(args.results);
  run_job_queue(jobs, store, [](const JobEvent& e) { std::cout << e.to_json().dump() << "\n" << std::flush; },
                args.ring_jobs);
  return 0;
}

const CommandRegistration grid_worker_registration("grid-worker", "", [](CLI::App& app) {
  app.group("");  // internal: not listed in --help
  auto args = std::make_shared<WorkerArgs>();
  app.add_option("--manifest", args->manifest, "job manifest (JSON lines)")->required();
  app.add_option("--results", args->results, "results directory")->required();
  app.add_option("--threads", args->threads, "threads for the BLAS products (models/cpu_threads.hpp)")->check(CLI::Range(0, 4096));
  app.add_option("--ring-jobs", args->ring_jobs, "jobs per prefill-sharing ring (1: none)")->check(CLI::Range(1, 4096));
  return [args] { return run_worker(*args); };
});

}  // namespace
}  // namespace kvbench::harness
