#pragma once
// A grid spec: many jobs as the product of axes, plus extra jobs listed one by one.
//
//   {
//     "name": "nightly",                       // optional; names the Slurm job and summaries
//     "description": "...",                    // optional
//     "fixed": {"protocol": "stream", "limit": 3, "task_params": {"mode": "stream"}},
//     "axes": {
//       "task":   ["tinystories"],
//       "policy": ["kvec", {"name": "bumblebee", "params": {"alpha": 0.5}}],
//       "budget": ["32", "64"],
//       "model":  ["stories260K"],
//       "seed":   [0, 1]
//     },
//     "include": [{"task": "tinystories", "policy": "full", "budget": "full"}]
//   }
//
// "fixed" holds job-spec fields shared by every job (tasks/run_task.hpp lists the fields).
// Each axis is a job-spec field with a non-empty list of values; "policy" values are a name or
// {"name", "params"} (params become the job's policy_params). The jobs are the product of the
// axes over "fixed", axes in the order model, task, policy, budget, seed, then the others by
// name, the first varying slowest; then each "include" entry over "fixed". A field may not be
// both fixed and an axis. Jobs whose canonical specs coincide are run once.
//
// A file may also hold a JSON list of grids (`kvbench table --print-grid` prints one when a
// table's cells differ in their fixed fields): they run as one grid named after the file, every
// grid's jobs in order, a job two grids share once.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness/job_spec.hpp"

namespace kvbench::harness {

struct GridCell {
  nlohmann::json raw;  // the cell as the grid writes it (fixed fields + axis values), unnormalised
  Job job;
};

struct Grid {
  std::string name;
  std::string description;
  std::vector<GridCell> cells;  // unique jobs, in expansion order
};

// The raw cells (no normalisation); throws std::invalid_argument naming `where` and the field.
std::vector<nlohmann::json> expand_grid_cells(const nlohmann::json& grid, const std::string& where);

// Expands and normalises (ids, checksums); errors name the file and the line of the field.
// `grid` is a grid object or a list of them.
Grid load_grid(const std::string& path);
Grid make_grid(const nlohmann::json& grid, const std::string& where);

}  // namespace kvbench::harness
