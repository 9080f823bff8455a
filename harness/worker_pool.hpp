#pragma once
// Runs a list of jobs against a results store with one or more workers.
//
// Every worker walks the whole list in order and, for each job, skips it if its result exists,
// otherwise claims it (results_store.hpp) and runs it; a job claimed by another live process is
// revisited until its result appears or its claim goes stale (its holder died), in which case
// this worker takes it over. So any number of workers, in one `kvbench grid` or in several
// running at once on one directory, run each job exactly once, and a grid killed at any point
// resumes with only the missing cells.
//
// Workers are processes (`kvbench grid-worker`), not threads: a crash in one job cannot take
// the others down, and libtorch's intra-op thread pool is split between them (--threads).
// Each worker caches its model (tasks::run_task), so a model is loaded once per worker. Jobs that
// differ only in how they compress go in rings: a worker claims what it can of a ring and runs
// those jobs taking turns, sharing each prompt's prefill (harness/prefill_sharing.hpp).
// Workers die with their parent (PR_SET_PDEATHSIG), so kill -9 of the grid stops them all.
#include <functional>
#include <string>
#include <vector>

#include "harness/job_spec.hpp"
#include "harness/results_store.hpp"

namespace kvbench::harness {

struct JobEvent {
  enum class Kind { kStarted, kProgress, kFinished, kSkipped, kFailed, kWaiting };
  JobEvent() = default;
  JobEvent(Kind kind, std::string id, std::string message = {})
      : kind(kind), id(std::move(id)), message(std::move(message)) {}
  Kind kind = Kind::kStarted;
  std::string id;
  int64_t done = 0, total = 0;  // kProgress: examples
  double seconds = 0;           // kFinished
  int64_t prefill_computed = 0, prefill_reused = 0;  // kFinished: prompt tokens (models/prefill_share.hpp)
  int64_t rows_projected = 0, rows_batched = 0;      // kFinished: decoding rows (models/decode_batch.hpp)
  std::string message;          // kFailed: the error; kSkipped: why; kFinished: headline metrics
  nlohmann::json to_json() const;
  static JobEvent from_json(const nlohmann::json& j);
};
using JobEventFn = std::function<void(const JobEvent&)>;

// One worker in this process: the loop described above, over rings of at most `ring_jobs` jobs
// that share their prefills (harness/prefill_sharing.hpp; 1: every job alone). `poll_seconds`: how
// often a job claimed elsewhere is revisited.
void run_job_queue(const std::vector<Job>& jobs, ResultsStore& store, const JobEventFn& on_event,
                   size_t ring_jobs = 1, double poll_seconds = 0.5);

struct PoolOptions {
  int workers = 1;              // 1: run in this process
  int threads_per_worker = 0;   // libtorch intra-op threads per worker process; 0 = cores / workers
  std::string executable;       // the kvbench binary for worker processes; "" = this executable
  bool share_prefill = true;    // one prefill per prompt across a ring of jobs (harness/prefill_sharing.hpp)
  // The most jobs one ring runs at once: each holds its own task state (and, under kvpress's
  // compress-once protocol, its compressed context) while the others run.
  static constexpr size_t kMaxRingJobs = 64;
};

// Runs the jobs; events from every worker arrive on this thread, in order per worker. Throws
// std::runtime_error when a worker process dies abnormally (its message names the exit status).
void run_worker_pool(const std::vector<Job>& jobs, ResultsStore& store, const PoolOptions& options,
                     const JobEventFn& on_event);

// The manifest a worker process reads: one {"id", "spec", "checksums"} per line.
void write_job_manifest(const std::string& path, const std::vector<Job>& jobs);
std::vector<Job> read_job_manifest(const std::string& path);

// One line of the headline metrics: "perplexity=3.2109 mean_nll=1.1666".
std::string headline_metrics(const nlohmann::json& metrics);

}  // namespace kvbench::harness
