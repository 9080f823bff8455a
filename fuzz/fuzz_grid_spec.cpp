// Grid specs: name, fixed, axes (counted before expansion), include; every expanded cell
// normalised as a job spec. The task/policy registries come from the normal build, uninstrumented.
// fuzz-sources: harness/grid_spec.cpp harness/plain_name.cpp harness/job_spec.cpp harness/job_id.cpp harness/atomic_file.cpp datasets/json_parse.cpp datasets/regular_file.cpp
// fuzz-prebuilt
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "datasets/json_parse.hpp"
#include "harness/grid_limits.hpp"
#include "harness/grid_spec.hpp"
#include "tasks/run_task.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool limited = [] { return ::setenv("KVBENCH_MAX_GRID_JOBS", "256", 1) == 0; }();
  (void)limited;
  try {
    const nlohmann::json grid =
        kvbench::datasets::parse_json(std::string_view(reinterpret_cast<const char*>(data), size), "grid.json");
    const auto cells = kvbench::harness::expand_grid_cells(grid, "grid.json");
    if (static_cast<int64_t>(cells.size()) > kvbench::harness::max_grid_jobs()) __builtin_trap();
    for (const auto& cell : cells) {
      try {
        (void)kvbench::tasks::normalize_job_spec(cell);
      } catch (const std::invalid_argument&) {
      }
    }
  } catch (const std::invalid_argument&) {
  } catch (const std::runtime_error&) {
  }
  return 0;
}
