// `kvbench table SPEC`: a paper's table regenerated from our results, beside the paper's numbers.
#include <filesystem>
#include <iostream>

#include "harness/atomic_file.hpp"
#include "harness/command.hpp"
#include "harness/spec_overrides.hpp"
#include "harness/table_render.hpp"

namespace kvbench::harness {
namespace {

struct TableArgs {
  std::string spec;
  std::string results = "results/runs";
  std::string format = "md";
  std::string out;
  std::string model;
  std::vector<std::string> sets;
  std::string spec_overrides;
  bool print_grid = false;
  std::string grid_out;
};

int run_table(const TableArgs& args) {
  const TableSpec spec = load_table_spec(args.spec);
  const nlohmann::json overrides =
      (args.spec_overrides.empty() ? SpecOverrides() : SpecOverrides::load(args.spec_overrides))
          .for_spec(spec.id, command_line_overrides(args.model, args.sets));
  validate_cell_jobs(spec, overrides);  // --set limit=-2 stops here, not as "N cells missing"

  if (args.print_grid || !args.grid_out.empty()) {
    const nlohmann::json grids = table_grids(spec, overrides);
    const nlohmann::json shown = grids.size() == 1 ? grids[0] : grids;
    if (!args.grid_out.empty()) {
      if (grids.size() == 1) {
        write_file_atomically(args.grid_out, grids[0].dump(2) + "\n");
        std::cerr << args.grid_out << "\n";
      } else {
        const std::filesystem::path base(args.grid_out);
        for (size_t i = 0; i < grids.size(); ++i) {
          const std::string file = (base.parent_path() / (base.stem().string() + "-" + std::to_string(i + 1) +
                                                          base.extension().string())).string();
          write_file_atomically(file, grids[i].dump(2) + "\n");
          std::cerr << file << "\n";
        }
      }
    }
    if (args.print_grid) std::cout << shown.dump(2) << "\n";
    return 0;
  }

  const ResultsIndex results = ResultsIndex::load(args.results);
  for (const auto& w : results.warnings()) std::cerr << "kvbench table: warning: " << w << "\n";
  const TableData table = compute_table(spec, results, overrides);
  const std::vector<std::pair<std::string, std::string>> formats = {{"md", "md"}, {"csv", "csv"}, {"tex", "tex"}};
  for (const auto& [name, ext] : formats) {
    if (args.format != name && args.format != "all") continue;
    const std::string text = name == "md" ? render_markdown(table) : name == "csv" ? render_csv(table) : render_latex(table);
    if (args.out.empty()) {
      std::cout << text;
      if (args.format == "all") std::cout << "\n";
    } else {
      std::filesystem::create_directories(args.out);
      const std::string file = (std::filesystem::path(args.out) / (spec.id + "." + ext)).string();
      write_file_atomically(file, text);
      std::cerr << file << "\n";
    }
  }
  if (table.missing_cells > 0)
    std::cerr << "kvbench table: " << table.missing_cells << " of " << table.job_cells << " cells missing ("
              << table.missing_jobs << " jobs without a result)\n";
  return 0;
}

const CommandRegistration table_registration(
    "table", "Regenerate a paper's table from results, ours beside the paper's numbers (Markdown, CSV, LaTeX)",
    [](CLI::App& app) {
      auto args = std::make_shared<TableArgs>();
      app.add_option("spec", args->spec, "table spec (results/tables/*.json)")->required();
      app.add_option("--results", args->results, "folder of result files (searched recursively)")->capture_default_str();
      app.add_option("--format", args->format, "md, csv, tex or all")->capture_default_str()
          ->check(CLI::IsMember({"md", "csv", "tex", "all"}));
      app.add_option("--out", args->out, "write <id>.md/.csv/.tex into this folder instead of stdout");
      app.add_option("--model", args->model, "our model for every cell (overrides the spec's fixed.model)");
      app.add_option("--set", args->sets, "FIELD=VALUE job field for every cell, e.g. limit=20, task_params.max_tokens=512");
      app.add_option("--spec-overrides", args->spec_overrides,
                     "JSON file of job fields per spec id (results/regeneration.json), beneath --model/--set");
      app.add_flag("--print-grid", args->print_grid,
                   "print the grid JSON that runs every job of the table (an array when several grids are needed)");
      app.add_option("--grid-out", args->grid_out, "write the grid(s) to this file (FILE-1.json, FILE-2.json, ... if several)");
      return [args] { return run_table(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
