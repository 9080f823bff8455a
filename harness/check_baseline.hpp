#pragma once
// The nightly check: a fixed grid's metrics against a committed baseline with per-metric
// tolerances. A baseline file:
//
//   {
//     "grid": "grids/nightly.json",
//     "tolerances": {"default": {"abs": 1e-6, "rel": 1e-6}, "mean_nll": {"abs": 1e-4}, "tokens": {"abs": 0}},
//     "cells": [{"cell": {raw grid cell}, "description": "...", "id": "...", "metrics": {...}}, ...]
//   }
//
// A cell is matched by its raw grid cell (the fixed fields and axis values as the grid writes
// them, canonical JSON), not by its id: a changed default or checksum then shows up as moved
// metrics, which is what the check is for. A number passes when |current − baseline| ≤
// abs + rel·|baseline| (the metric's tolerance, else "default"); other values must be equal.
// The check fails when a metric moves beyond its tolerance, disappears or is not in the baseline,
// when a cell has no result, or when the grid and the baseline list different cells. Unknown
// fields, a cell without metrics, a repeated cell and a tolerance for a metric no cell has are
// errors in the baseline itself.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kvbench::harness {

struct Tolerance {
  double abs = 0;
  double rel = 0;
  bool allows(double baseline, double current) const;
};

struct MetricDiff {
  std::string metric;
  nlohmann::json baseline, current;  // null when absent
  Tolerance tolerance;
  bool ok = true;
};

struct CellDiff {
  std::string description;
  nlohmann::json cell;
  enum class Status { kOk, kMoved, kMissingResult, kNotInBaseline, kNotInGrid } status = Status::kOk;
  std::string error;  // kMissingResult: why (the job's error), if known
  std::vector<MetricDiff> metrics;
};

struct CheckReport {
  std::vector<CellDiff> cells;
  bool passed() const;
  // Failing cells with every metric (baseline, current, difference, tolerance); passing cells
  // in one line each, or with every metric when `verbose`.
  std::string render(bool verbose) const;
};

// One cell of the current run: the raw grid cell, its description, and its metrics (null when
// the job produced no result, with `error` saying why).
struct CurrentCell {
  nlohmann::json cell;
  std::string description;
  std::string id;
  nlohmann::json metrics;
  std::string error;
};

// Validates the baseline's structure (errors name `where` and the field).
void validate_baseline(const nlohmann::json& baseline, const std::string& where);
CheckReport compare_to_baseline(const nlohmann::json& baseline, const std::vector<CurrentCell>& current);
// The tolerances every new baseline starts with.
nlohmann::json default_tolerances();
// A baseline from the current run, keeping `previous`'s tolerances when it has them.
nlohmann::json make_baseline(const std::string& grid_path, const std::vector<CurrentCell>& current,
                             const nlohmann::json& previous);

}  // namespace kvbench::harness
