#pragma once
// Runs a grid's pending jobs locally with a progress bar on stderr; shared by `kvbench grid`,
// `kvbench demo` and `kvbench check`.
#include <map>
#include <string>
#include <vector>

#include "harness/job_spec.hpp"
#include "harness/results_store.hpp"
#include "harness/worker_pool.hpp"

namespace kvbench::harness {

struct GridRunSummary {
  int64_t already_done = 0;   // result files that existed before
  int64_t ran = 0;            // run by this grid
  int64_t by_others = 0;      // finished meanwhile by another process
  std::map<std::string, std::string> failed;  // id -> error
  std::vector<std::string> missing;            // ids without a result at the end
  // Prompt tokens the jobs run here prefilled by running the model, and by replaying a prefill
  // another job of their ring ran (harness/prefill_sharing.hpp).
  int64_t prefill_computed = 0, prefill_reused = 0;
  // One-row (decoding) projections the jobs ran, and those computed in a batch with other jobs' rows
  // of their ring (models/decode_batch.hpp).
  int64_t rows_projected = 0, rows_batched = 0;
  bool complete() const { return failed.empty() && missing.empty(); }
};

// `quiet`: no progress bar and no per-job lines.
GridRunSummary run_grid_jobs(const std::vector<Job>& jobs, ResultsStore& store, const PoolOptions& options,
                             bool quiet);

}  // namespace kvbench::harness
