#pragma once
// How many jobs a grid may have: counted before the grid is expanded, since a product of a few
// long axes can be billions of cells (built in memory until bad_alloc).
#include <cstdint>

namespace kvbench::harness {

constexpr int64_t kDefaultMaxGridJobs = 100000;

// kDefaultMaxGridJobs, or the environment's KVBENCH_MAX_GRID_JOBS (a positive integer).
int64_t max_grid_jobs();

}  // namespace kvbench::harness
