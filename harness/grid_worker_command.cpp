// `kvbench grid-worker` (hidden): one worker process of `kvbench grid --workers N`. Runs the
// jobs of a manifest (harness/worker_pool.hpp) and reports events as JSON lines on stdout.
#include <torch/torch.h>

#include <iostream>

#include "harness/command.hpp"
#include "harness/worker_pool.hpp"

namespace kvbench::harness {
namespace {

struct WorkerArgs {
  std::string manifest;
  std::string results;
  int threads = 0;
};

int run_worker(const WorkerArgs& args) {
  if (args.threads > 0) at::set_num_threads(args.threads);
  std::vector<Job> jobs = read_job_manifest(args.manifest);
  ResultsStore store(args.results);
  run_job_queue(jobs, store, [](const JobEvent& e) { std::cout << e.to_json().dump() << "\n" << std::flush; });
  return 0;
}

const CommandRegistration registration("grid-worker", "", [](CLI::App& app) {
  app.group("");  // internal: not listed in --help
  auto args = std::make_shared<WorkerArgs>();
  app.add_option("--manifest", args->manifest, "job manifest (JSON lines)")->required();
  app.add_option("--results", args->results, "results directory")->required();
  app.add_option("--threads", args->threads, "libtorch intra-op threads")->check(CLI::Range(0, 4096));
  return [args] { return run_worker(*args); };
});

}  // namespace
}  // namespace kvbench::harness
