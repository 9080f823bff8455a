// `kvbench report --out report.html`: every table and figure of results/tables on one page.
#include <filesystem>
#include <iostream>

#include "harness/atomic_file.hpp"
#include "harness/command.hpp"
#include "harness/report.hpp"
#include "harness/table_spec.hpp"

namespace kvbench::harness {
namespace {

struct ReportArgs {
  ReportOptions options;
  std::string out = "report.html";
  std::string model;
  std::vector<std::string> sets;
  std::string spec_overrides;
  bool no_figures = false;
};

int run_report(ReportArgs args) {
  args.options.overrides = command_line_overrides(args.model, args.sets);
  if (!args.spec_overrides.empty()) args.options.spec_overrides = SpecOverrides::load(args.spec_overrides);
  args.options.figures = !args.no_figures;
  const std::string html = build_report(args.options);
  write_file_atomically(args.out, html);  // creates the folder; two reports never share a temporary
  std::cout << args.out << "\n";
  return 0;
}

const CommandRegistration report_registration(
    "report", "One self-contained HTML page with every paper table (ours vs theirs) and figure", [](CLI::App& app) {
      auto args = std::make_shared<ReportArgs>();
      app.add_option("--results", args->options.results_dir, "folder of result files")->capture_default_str();
      app.add_option("--tables", args->options.tables_dir, "folder of table specs")->capture_default_str();
      app.add_option("--out", args->out, "the HTML file to write")->capture_default_str();
      app.add_option("--model", args->model, "our model for every cell (overrides each spec's fixed.model)");
      app.add_option("--set", args->sets, "FIELD=VALUE job field for every cell, e.g. limit=20");
      app.add_option("--spec-overrides", args->spec_overrides,
                     "JSON file of job fields per spec id (results/regeneration.json), beneath --model/--set");
      app.add_flag("--no-figures", args->no_figures, "tables only (no gnuplot)");
      return [args] { return run_report(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
