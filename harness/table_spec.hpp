#pragma once
// A table spec names one table or figure of a paper: its rows and columns as job axes, the metric
// and its format, the paper's own numbers cell by cell, and optionally how to draw it. The format
// is documented in docs/tables.md; the specs for the five papers live in results/tables/.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kvbench::harness {

// What number a cell shows, taken from a result file.
struct MetricSpec {
  std::vector<std::string> paths;  // dotted paths, e.g. "rougeL" or "rouge1.fmeasure"; "{row}" and
                                   // "{column}" stand for the cell's row and column keys
                                   // ("heatmap.len={column},depth={row}")
  std::string combine;             // "" (one path), "geomean" or "mean" of several paths
  std::string from = "metrics";    // paths are inside "metrics", or from the result's root ("result")
  double scale = 1.0;              // shown = value * scale + offset
  double offset = 0.0;
  int decimals = 2;
  std::string label;               // e.g. "ROUGE-L (%)"
  std::string ratio_to_row;        // show ours as a ratio to this row's value in the same column
  bool higher_is_better = true;
};

// One row or one column of the table.
struct AxisEntry {
  std::string label;
  std::string key;                                     // replaces {row}/{column} in metric paths (default: label)
  std::string group;                                   // a header spanning consecutive entries
  nlohmann::json fields = nlohmann::json::object();    // partial job spec
  std::optional<MetricSpec> metric;                    // columns: overrides the table's metric
  std::optional<double> x;                             // columns: numeric position in figures
  std::string aggregate;                               // columns: "mean" of the row's other columns
  std::vector<std::optional<double>> paper;            // rows: the paper's numbers, one per column
  std::string curve_file;                              // rows (stream figures): a TSV curve instead of results
};

struct FigureSpec {
  std::string type;  // "lines" | "bars" | "heatmap" | "stream"
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  bool show_paper = true;      // lines/bars: the paper's numbers as dashed lines / hatched bars
  std::string reference_row;   // heatmap: show |value - value of this row| (BUZZ Fig. 7)
  std::string panels = "none"; // lines/bars: "column_group" = one panel per column group;
                               // heatmap: "row_group" = one heatmap per row group
  std::string palette;         // heatmap: "good_high" (red→green) or "closeness" (white→dark)
  std::string curve = "moving";  // stream: "moving" average of NLL, or "cumulative" mean
  int window = 64;               // stream: moving-average width in tokens
  std::string y = "nll";         // stream: "nll" or "perplexity" (exp of the smoothed NLL)
  int max_points = 2000;         // stream: points kept per series (evenly thinned)
};

struct TableSpec {
  std::string path;  // the file it was read from ("" for in-memory specs)
  std::string id, title, description;
  std::string row_header;  // the first column's header, e.g. "Method"
  // The paper: name, file, source (section/table), model, model_ids, numbers_note.
  std::string paper_name, paper_file, paper_source, paper_model, paper_numbers_note;
  std::vector<std::string> paper_model_ids;
  nlohmann::json fixed = nlohmann::json::object();
  MetricSpec metric;
  std::vector<AxisEntry> rows, columns;
  std::vector<int64_t> seeds;  // empty: any seed; results of several seeds are averaged
  std::vector<std::string> notes;
  std::optional<FigureSpec> figure;

  bool has_paper_numbers() const;
  bool is_aggregate_column(size_t c) const { return !columns[c].aggregate.empty(); }
};

// Reads and validates a spec; errors name the file, the JSON line for syntax errors, and the
// field (e.g. "rows[2].paper[3]") for everything else.
TableSpec load_table_spec(const std::string& path);
TableSpec parse_table_spec(const nlohmann::json& spec, const std::string& origin);
// Every *.json spec in a folder, sorted by file name.
std::vector<TableSpec> load_table_specs(const std::string& dir);

// Recursive merge: objects key by key (task_params, policy_params), everything else replaced.
nlohmann::json merge_fields(nlohmann::json base, const nlohmann::json& over);
// Checks every job cell as a grid would (tasks::normalize_job_spec: known fields and task
// parameters, the policy's ranges, budget, limit, block, device; no file is read), so a typo
// stops the command instead of reading as missing cells. parse_table_spec checks the cells as
// written; this checks them again under --model/--set (nothing to do without them). Throws
// std::invalid_argument "<spec>: rows[r] x columns[c] (<row> / <column>)[ with --model/--set]: <what>".
void validate_cell_jobs(const TableSpec& spec, const nlohmann::json& overrides = nlohmann::json::object());

// The job fields of cell (r, c): fixed ⊕ row.fields ⊕ column.fields ⊕ overrides.
nlohmann::json cell_job(const TableSpec& spec, size_t r, size_t c, const nlohmann::json& overrides = {});
const MetricSpec& cell_metric(const TableSpec& spec, size_t c);
// The metric of cell (r, c) with {row} and {column} in its paths replaced by the entries' keys.
MetricSpec cell_metric(const TableSpec& spec, size_t r, size_t c);
// Validates one job-field object (fixed, a row's or a column's fields); budgets are normalised.
nlohmann::json check_job_fields(const nlohmann::json& fields, const std::string& where);

// Job-field overrides from the command line: `--model M` and `--set FIELD=VALUE` (VALUE read as
// JSON when it parses, else as a string; FIELD may be `task_params.KEY` or `policy_params.KEY`).
// They apply to every cell, both to the grid and to the matching: `--set limit=20` prints the grid
// of a quick run and tables only the results of that quick run.
nlohmann::json command_line_overrides(const std::string& model, const std::vector<std::string>& sets);

// The grids that run every job of the table (seeds from the spec): as few product grids
// {"axes": {"task","policy","budget","model"[,"seed"]}, "fixed": {...}} as cover the jobs exactly.
nlohmann::json table_grids(const TableSpec& spec, const nlohmann::json& overrides = {});

}  // namespace kvbench::harness
