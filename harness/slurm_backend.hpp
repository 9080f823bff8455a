#pragma once
// `kvbench grid --backend slurm`: the grid's pending jobs as one Slurm job array, one array task
// per job. The directory it writes:
//   manifest.json   {"grid", "created_at", "results", "kvbench", "jobs": [{"index", "id", "description", "spec"}]}
//   jobs/<i>.json   the canonical spec of array task i
//   array.sbatch    #SBATCH --array=0-(n-1)[%max_parallel]; runs
//                   kvbench run --job <dir>/jobs/${SLURM_ARRAY_TASK_ID}.json --results <results>
//   logs/           %A_%a.out of every array task
// Each array task writes its result file like any job; `kvbench collect <dir>` gathers them.
#include <string>
#include <vector>

#include "harness/job_spec.hpp"
#include "harness/output_escaping.hpp"

namespace kvbench::harness {

struct SlurmOptions {
  std::string dir;                          // where to write the array; created
  std::string executable;                   // kvbench binary the tasks run ("" = this one)
  std::string working_dir;                  // --chdir of the tasks ("" = the current directory)
  int max_parallel = 0;                     // %N throttle; 0 = none
  int cpus_per_task = 0;                    // 0 = the cluster's default
  std::string time_limit;                   // --time, "" = the partition's default
  std::string partition;                    // "" = the default partition
  std::vector<std::string> extra_directives;  // more "#SBATCH" options, e.g. "--gres=gpu:1"
};

struct SlurmArray {
  std::string dir, script, manifest;
  size_t tasks = 0;
};

// Throws std::invalid_argument when `jobs` is empty (Slurm rejects an empty array).
SlurmArray write_slurm_array(const std::string& grid_name, const std::vector<Job>& jobs,
                             const std::string& results_dir, const SlurmOptions& options);

// Submits with `sbatch --parsable` and returns the Slurm job id; throws with sbatch's output on
// failure.
std::string submit_slurm_array(const SlurmArray& array);


}  // namespace kvbench::harness
