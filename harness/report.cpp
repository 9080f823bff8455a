#include "harness/report.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/figure.hpp"
#include "harness/file_tree.hpp"
#include "harness/process_temp.hpp"
#include "harness/output_escaping.hpp"
#include "harness/table_render.hpp"

namespace kvbench::harness {
namespace fs = std::filesystem;
namespace {


std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The <svg> element of a gnuplot SVG file, without the XML prolog and doctype.
std::string svg_element(const std::string& svg) {
  const size_t start = svg.find("<svg");
  return start == std::string::npos ? std::string() : svg.substr(start);
}

// A private temporary folder, removed when the report is built (or by the next report, when this
// one is killed: harness/process_temp.hpp).
struct TempDir {
  fs::path path = make_process_temp("report", /*folder=*/true);
  ~TempDir() { remove_tree(path.string()); }
};

const char* kStyle = R"(body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2.5em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0;display:block;overflow-x:auto}
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:right;white-space:nowrap}
th:first-child{text-align:left}thead th{background:#f4f4f4;text-align:center}
td.paper{color:#555}td.diff{color:#777;font-size:.9em}td.missing{color:#bbb}
tr.group td{text-align:left;font-style:italic;background:#fafafa}
.qualitative{background:#fff6e0;border-left:4px solid #f0b000;padding:.4em .8em}
.missing{color:#a00}.figure svg{max-width:100%;height:auto}.note{color:#666}
nav li{margin:.15em 0}code{font-size:.9em})";

}  // namespace

std::string build_report(const ReportOptions& options) {
  const std::vector<TableSpec> specs = load_table_specs(options.tables_dir);
  for (const auto& spec : specs) validate_cell_jobs(spec, options.spec_overrides.for_spec(spec.id, options.overrides));
  const ResultsIndex results = ResultsIndex::load(options.results_dir);
  const std::string gnuplot = options.figures ? find_gnuplot() : "";
  TempDir tmp;

  std::ostringstream sections, nav;
  size_t cells = 0, missing = 0, figures = 0;
  for (const auto& spec : specs) {
    const TableData table = compute_table(spec, results, options.spec_overrides.for_spec(spec.id, options.overrides));
    cells += table.job_cells;
    missing += table.missing_cells;
    nav << "<li><a href=\"#" << html_escape(spec.id) << "\">" << html_escape(spec.title) << "</a> <span class=\"note\">("
        << table.job_cells - table.missing_cells << "/" << table.job_cells << " cells"
        << (spec.has_paper_numbers() ? "" : ", no paper numbers") << ")</span></li>\n";
    std::string html = render_html(table);
    if (spec.figure) {
      std::string figure;
      if (!options.figures) {
        figure = "<p class=\"note\">Figure not drawn (tables only).</p>";
      } else if (gnuplot.empty()) {
        figure = "<p class=\"missing\">Figure not drawn: gnuplot is not installed (scripts/setup.sh installs gnuplot-nox).</p>";
      } else {
        try {
          const FigureFiles files = draw_figure(spec, table, (tmp.path / spec.id).string());
          figure = "<div class=\"figure\">" + svg_element(read_text(files.svg)) + "</div>";
          for (const auto& w : files.warnings) figure += "<p class=\"note\">" + html_escape(w) + "</p>";
          ++figures;
        } catch (const std::exception& e) {
          figure = "<p class=\"missing\">Figure not drawn: " + html_escape(e.what()) + "</p>";
        }
      }
      const size_t end = html.rfind("</section>");
      html.insert(end, figure + "\n");
    }
    sections << html;
  }

  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[64];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::ostringstream page;
  page << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>kvbench report</title>\n<style>"
       << kStyle << "</style>\n</head>\n<body>\n<h1>kvbench: the papers' tables, ours beside theirs</h1>\n";
  page << "<p>" << specs.size() << " tables and figures from <code>" << html_escape(options.tables_dir) << "</code>; "
       << results.records().size() << " results from <code>" << html_escape(options.results_dir) << "</code>; "
       << cells - missing << " of " << cells << " cells filled; " << figures << " figures drawn. Generated " << stamp
       << ". Each cell: ours (mean ± std over seeds when n &gt; 1), the paper's number, and ours − paper.</p>\n";
  if (!results.warnings().empty()) {
    page << "<ul class=\"missing\">\n";
    for (const auto& w : results.warnings()) page << "<li>" << html_escape(w) << "</li>\n";
    page << "</ul>\n";
  }
  page << "<nav><ol>\n" << nav.str() << "</ol></nav>\n" << sections.str() << "</body>\n</html>\n";
  return page.str();
}

}  // namespace kvbench::harness
