#pragma once
// A table spec filled with our results: per cell the matched results, mean ± std over seeds, the
// paper's number and the difference; the warnings and the rank agreement with the paper. The
// renderings of it are in harness/table_render.hpp.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "harness/results_index.hpp"
#include "harness/table_spec.hpp"

namespace kvbench::harness {

// The text of a cell without a value, in every rendering.
inline constexpr const char* kDash = "—";

struct CellValue {
  nlohmann::json job;                         // the cell's job fields (null for aggregate columns)
  std::vector<const ResultRecord*> results;   // results that matched and had the metric
  std::vector<double> values;                 // their metric values, shown units (scaled)
  std::optional<double> ours;                 // mean (or ratio / aggregate)
  double std = 0.0;                           // sample standard deviation (n > 1)
  std::optional<double> paper;
  std::optional<double> diff;                 // ours - paper
  bool ambiguous = false;                     // results of different configurations matched
  std::string ambiguity;                      // which fields differ
  std::vector<std::string> metric_errors;     // matched results that lack the metric
  size_t n() const { return values.size(); }
};

struct TableData {
  const TableSpec* spec = nullptr;
  std::vector<std::vector<CellValue>> cells;  // [row][column]
  std::vector<std::string> our_models;        // models of the matched results (or of the jobs)
  bool same_model_as_paper = false;
  size_t job_cells = 0, missing_cells = 0, missing_jobs = 0, total_jobs = 0;
  std::vector<std::string> warnings;          // ambiguous cells, results without the metric
  // Per column: Kendall's tau-b between our values and the paper's over the rows that have both
  // (only where at least 3 rows do): with another model, the ordering is what can be compared.
  std::vector<std::optional<double>> rank_agreement;
  std::vector<size_t> rank_rows;
};

// Kendall's tau-b of paired values (ties handled); nullopt when fewer than 2 pairs or no order.
std::optional<double> kendall_tau_b(const std::vector<double>& a, const std::vector<double>& b);

// Matches results to every cell. `overrides` are job fields applied to every cell (e.g. --model).
TableData compute_table(const TableSpec& spec, const ResultsIndex& results, const nlohmann::json& overrides = {});

// Cell texts, shared by every format.
std::string format_value(double v, int decimals);           // "12.3"
std::string format_diff(double v, int decimals);            // "+0.4", "-1.2", "0.0"
std::string format_ours(const CellValue& cell, int decimals);  // "12.3", "12.3 ± 0.4 (n=3)", "—"

}  // namespace kvbench::harness
