#pragma once
// `kvbench report`: one self-contained HTML page with every table spec rendered (ours beside the
// paper's numbers) and every figure inlined as SVG.
#include <nlohmann/json.hpp>

#include <string>

#include "harness/spec_overrides.hpp"

namespace kvbench::harness {

struct ReportOptions {
  std::string results_dir = "results/runs";
  std::string tables_dir = "results/tables";
  nlohmann::json overrides = nlohmann::json::object();  // e.g. {"model": ...}, for every spec
  SpecOverrides spec_overrides;                          // per spec, beneath `overrides`
  bool figures = true;  // false: tables only (figures are then listed as not drawn)
};

// Builds the page. Figures are drawn with gnuplot in a temporary folder and inlined; when gnuplot
// is missing or fails, the page says so where the figure would be.
std::string build_report(const ReportOptions& options);

}  // namespace kvbench::harness
