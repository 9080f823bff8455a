// `kvbench figure SPEC --out DIR`: a paper's figure drawn from our results with gnuplot.
#include <iostream>

#include "harness/command.hpp"
#include "harness/figure.hpp"
#include "harness/spec_overrides.hpp"

namespace kvbench::harness {
namespace {

struct FigureArgs {
  std::string spec;
  std::string results = "results/runs";
  std::string out;
  std::string model;
  std::vector<std::string> sets;
  std::string spec_overrides;
  bool script_only = false;
};

int run_figure(const FigureArgs& args) {
  const TableSpec spec = load_table_spec(args.spec);
  const nlohmann::json overrides =
      (args.spec_overrides.empty() ? SpecOverrides() : SpecOverrides::load(args.spec_overrides))
          .for_spec(spec.id, command_line_overrides(args.model, args.sets));
  validate_cell_jobs(spec, overrides);
  const ResultsIndex results = ResultsIndex::load(args.results);
  for (const auto& w : results.warnings()) std::cerr << "kvbench figure: warning: " << w << "\n";
  const TableData table = compute_table(spec, results, overrides);
  const FigureFiles files = draw_figure(spec, table, args.out, !args.script_only);
  for (const auto& w : files.warnings) std::cerr << "kvbench figure: warning: " << w << "\n";
  std::cout << files.data << "\n" << files.script << "\n";
  if (!args.script_only) std::cout << files.png << "\n" << files.svg << "\n";
  if (table.missing_cells > 0)
    std::cerr << "kvbench figure: " << table.missing_cells << " of " << table.job_cells << " cells have no result ("
              << table.missing_jobs << " jobs to run: kvbench table " << args.spec << " --print-grid)\n";
  return 0;
}

const CommandRegistration figure_registration(
    "figure", "Draw a paper's figure from results with gnuplot (PNG and SVG, with the data and the script)",
    [](CLI::App& app) {
      auto args = std::make_shared<FigureArgs>();
      app.add_option("spec", args->spec, "table spec with a figure section (results/tables/*.json)")->required();
      app.add_option("--results", args->results, "folder of result files (searched recursively)")->capture_default_str();
      app.add_option("--out", args->out, "folder for <id>.png, <id>.svg, <id>.dat and <id>.gp")->required();
      app.add_option("--model", args->model, "our model for every cell (overrides the spec's fixed.model)");
      app.add_option("--set", args->sets, "FIELD=VALUE job field for every cell, e.g. limit=20, task_params.max_tokens=512");
      app.add_option("--spec-overrides", args->spec_overrides,
                     "JSON file of job fields per spec id (results/regeneration.json), beneath --model/--set");
      app.add_flag("--script-only", args->script_only, "write the data and the gnuplot script without running gnuplot");
      return [args] { return run_figure(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
