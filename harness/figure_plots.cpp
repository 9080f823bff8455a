#include "harness/figure_plots.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "harness/figure.hpp"
#include "harness/output_escaping.hpp"

namespace kvbench::harness {
namespace fs = std::filesystem;
namespace {

// A gnuplot string literal (output_escaping.hpp); the terminals run noenhanced, so labels like
// "streaming_llm" print as is.
std::string quote(const std::string& s) { return gnuplot_string(s); }

// An explicit tic label is a format string to gnuplot: a literal '%' must be doubled.
std::string tic_label(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '%' ? std::string("%%") : std::string(1, ch);
  return quote(out);
}

std::string number(double v) {
  if (!std::isfinite(v)) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// Tab-separated fields: labels never contain tabs or newlines.
std::string field(std::string s) {
  for (char& ch : s)
    if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
  return s;
}

std::string metric_axis_label(const TableSpec& spec) {
  if (spec.figure && !spec.figure->y_label.empty()) return spec.figure->y_label;
  if (!spec.metric.label.empty()) return spec.metric.label;
  return spec.metric.paths.front();
}

struct Panel {
  std::string title;
  std::vector<size_t> items;  // column indices (lines/bars) or row indices (heatmap)
};

std::vector<Panel> column_panels(const TableSpec& spec, bool by_group) {
  std::vector<Panel> panels;
  for (size_t c = 0; c < spec.columns.size(); ++c) {
    if (spec.is_aggregate_column(c)) continue;
    const std::string title = by_group ? spec.columns[c].group : "";
    if (panels.empty() || panels.back().title != title) panels.push_back({title, {}});
    panels.back().items.push_back(c);
  }
  return panels;
}

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                         "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
std::string color(size_t i) { return kColors[i % (sizeof kColors / sizeof *kColors)]; }

std::string axis_setup(const FigureSpec& f, const std::string& x_label, const std::string& y_label) {
  std::ostringstream s;
  s << "set xlabel " << quote(x_label) << "\nset ylabel " << quote(y_label) << "\n";
  s << (f.log_x ? "set logscale x\n" : "unset logscale x\n") << (f.log_y ? "set logscale y\n" : "unset logscale y\n");
  return s.str();
}

}  // namespace

GnuplotPlot write_lines_or_bars(const TableSpec& spec, const TableData& t, const std::string& id) {
  const FigureSpec& f = *spec.figure;
  GnuplotPlot w;
  const auto panels = column_panels(spec, f.panels == "column_group");
  bool numeric_x = true;
  for (const auto& p : panels)
    for (size_t c : p.items) numeric_x = numeric_x && spec.columns[c].x.has_value();
  if (f.type == "bars") numeric_x = false;
  std::ostringstream data, body;
  data << "# kvbench figure data for " << spec.id << " (" << single_line(spec.title) << ")\n";
  data << "# one block per panel; columns: x, label, then ours and paper for each row:";
  for (const auto& r : spec.rows) data << " [" << single_line(r.label) << "]";
  data << "\n";
  for (size_t p = 0; p < panels.size(); ++p) {
    data << "# panel " << p << ": " << single_line(panels[p].title) << "\n";
    for (size_t k = 0; k < panels[p].items.size(); ++k) {
      const size_t c = panels[p].items[k];
      data << number(numeric_x ? *spec.columns[c].x : static_cast<double>(k)) << "\t" << field(spec.columns[c].label);
      for (size_t r = 0; r < spec.rows.size(); ++r) {
        const CellValue& cell = t.cells[r][c];
        data << "\t" << (cell.ours ? number(*cell.ours) : "NaN") << "\t" << (cell.paper ? number(*cell.paper) : "NaN");
      }
      data << "\n";
    }
    data << "\n\n";
  }
  const bool paper = f.show_paper && spec.has_paper_numbers();
  if (panels.size() > 1) {
    w.width = std::max(900, 420 * static_cast<int>(panels.size()));
    body << "set multiplot layout 1," << panels.size() << " title " << quote(f.title.empty() ? spec.title : f.title)
         << "\n";
  } else {
    body << "set title " << quote(f.title.empty() ? spec.title : f.title) << "\n";
  }
  body << axis_setup(f, f.x_label, metric_axis_label(spec));
  body << "set grid ytics\n";
  // One panel: the key to the right. Several: below each panel, so the panels keep their width.
  if (panels.size() > 1) {
    w.height = 640;
    body << "set key below horizontal maxcols 2 Left reverse\n";
  } else {
    body << "set key outside right top vertical Left reverse\n";
  }
  if (f.type == "bars") {
    body << "set style data histograms\nset style histogram clustered gap 1\n"
         << "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset yrange [0:*]\n";
  } else if (!numeric_x) {
    body << "set offsets 0.3, 0.3, graph 0.05, graph 0.05\n";
  } else {
    body << "set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n";
  }
  for (size_t p = 0; p < panels.size(); ++p) {
    if (panels.size() > 1) body << "set title " << quote(panels[p].title) << "\n";
    std::vector<std::string> plots;
    for (size_t r = 0; r < spec.rows.size(); ++r) {
      const std::string ours_col = std::to_string(3 + 2 * r), paper_col = std::to_string(4 + 2 * r);
      bool row_ours = false, row_paper = false;
      for (size_t c : panels[p].items) {
        row_ours = row_ours || t.cells[r][c].ours.has_value();
        row_paper = row_paper || t.cells[r][c].paper.has_value();
      }
      // Series without a single value are left out (gnuplot would stop on an empty plot).
      auto source = [&] { return std::string(plots.empty() ? quote(id + ".dat") : "''") + " index " + std::to_string(p); };
      if (f.type == "bars") {
        if (row_ours)
          plots.push_back(source() + " using " + ours_col + (plots.empty() ? ":xtic(2)" : "") + " lc rgb '" + color(r) +
                          "' title " + quote(spec.rows[r].label + (paper ? " (ours)" : "")));
        if (paper && row_paper)
          plots.push_back(source() + " using " + paper_col + (plots.empty() ? ":xtic(2)" : "") + " lc rgb '" +
                          color(r) + "' fs pattern 4 border rgb '" + color(r) + "' title " +
                          quote(spec.rows[r].label + " (paper)"));
      } else {
        const std::string x = numeric_x ? "1" : "0";
        const std::string tic = numeric_x ? "" : ":xtic(2)";
        if (row_ours)
          plots.push_back(source() + " using " + x + ":" + ours_col + tic + " with linespoints lw 2 pt 7 ps 0.8 lc rgb '" +
                          color(r) + "' title " + quote(spec.rows[r].label + (paper ? " (ours)" : "")));
        if (paper && row_paper)
          plots.push_back(source() + " using " + x + ":" + paper_col + tic +
                          " with linespoints dt 2 lw 1.5 pt 6 ps 0.8 lc rgb '" + color(r) + "' title " +
                          quote(spec.rows[r].label + " (paper)"));
      }
    }
    if (plots.empty()) {
      // Nothing to draw yet: an empty frame with the columns on the x axis and a hint.
      const size_t n = panels[p].items.size();
      double lo = 0, hi = static_cast<double>(n) - 1;
      if (numeric_x) {
        lo = hi = *spec.columns[panels[p].items[0]].x;
        for (size_t c : panels[p].items) {
          lo = std::min(lo, *spec.columns[c].x);
          hi = std::max(hi, *spec.columns[c].x);
        }
      } else {
        body << "set xtics (";
        for (size_t k = 0; k < n; ++k)
          body << (k ? ", " : "") << tic_label(spec.columns[panels[p].items[k]].label) << " " << k;
        body << ")\n";
      }
      if (hi <= lo) { lo -= 0.5; hi += 0.5; }
      body << "set xrange [" << number(lo - 0.05 * (hi - lo)) << ":" << number(hi + 0.05 * (hi - lo)) << "]\n"
           << "set yrange [0:1]\nset label 1 'no results yet' at graph 0.5, 0.5 center\n"
           << "plot NaN notitle\nunset label 1\nset xrange [*:*]\nset yrange [" << (f.type == "bars" ? "0" : "*") << ":*]\nset xtics auto\n";
      continue;
    }
    body << "plot ";
    for (size_t i = 0; i < plots.size(); ++i) body << (i ? ", \\\n     " : "") << plots[i];
    body << "\n";
  }
  if (panels.size() > 1) body << "unset multiplot\n";
  w.data = data.str();
  w.body = body.str();
  return w;
}

GnuplotPlot write_heatmap(const TableSpec& spec, const TableData& t, const std::string& id) {
  const FigureSpec& f = *spec.figure;
  GnuplotPlot w;
  std::vector<size_t> columns;
  for (size_t c = 0; c < spec.columns.size(); ++c)
    if (!spec.is_aggregate_column(c)) columns.push_back(c);
  size_t ref = spec.rows.size();
  for (size_t r = 0; r < spec.rows.size(); ++r)
    if (spec.rows[r].label == f.reference_row) ref = r;
  std::vector<Panel> panels;
  for (size_t r = 0; r < spec.rows.size(); ++r) {
    if (r == ref) continue;
    const std::string title = f.panels == "row_group" ? spec.rows[r].group : "";
    if (panels.empty() || panels.back().title != title) panels.push_back({title, {}});
    panels.back().items.push_back(r);
  }
  std::ostringstream data, body;
  data << "# kvbench heatmap data for " << spec.id << "; one block per panel; columns: column index, row index, "
       << "value, label" << (ref < spec.rows.size() ? " (value = |ours - ours of row '" + single_line(f.reference_row) + "'|)" : "")
       << "\n";
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (size_t p = 0; p < panels.size(); ++p) {
    data << "# panel " << p << ": " << single_line(panels[p].title) << "\n";
    for (size_t k = 0; k < panels[p].items.size(); ++k) {
      const size_t r = panels[p].items[k];
      for (size_t i = 0; i < columns.size(); ++i) {
        std::optional<double> v = t.cells[r][columns[i]].ours;
        if (v && ref < spec.rows.size()) {
          const auto& base = t.cells[ref][columns[i]].ours;
          v = base ? std::optional<double>(std::fabs(*v - *base)) : std::nullopt;
        }
        if (v) { lo = std::min(lo, *v); hi = std::max(hi, *v); }
        data << i << "\t" << k << "\t" << (v ? number(*v) : "NaN") << "\t"
             << (v ? format_value(*v, cell_metric(spec, columns[i]).decimals) : "—") << "\n";
      }
    }
    data << "\n\n";
  }
  if (panels.size() > 1) {
    const int cols = std::min<int>(3, static_cast<int>(panels.size()));
    const int rows = (static_cast<int>(panels.size()) + cols - 1) / cols;
    w.width = 480 * cols;
    w.height = 420 * rows;
    body << "set multiplot layout " << rows << "," << cols << " title " << quote(f.title.empty() ? spec.title : f.title)
         << "\n";
  } else {
    w.height = std::max(360, 60 * static_cast<int>(spec.rows.size()) + 160);
    body << "set title " << quote(f.title.empty() ? spec.title : f.title) << "\n";
  }
  body << "set xlabel " << quote(f.x_label) << "\nset ylabel " << quote(f.y_label) << "\n";
  body << "set cblabel " << quote(ref < spec.rows.size() ? "|" + metric_axis_label(spec) + " − " + f.reference_row + "|"
                                                          : metric_axis_label(spec))
       << "\n";
  if (f.palette == "closeness")
    body << "set palette defined (0 '#ffffff', 1 '#fdd49e', 2 '#fc8d59', 3 '#b30000')\n";
  else if (f.palette == "good_low")
    body << "set palette defined (0 '#1a9850', 1 '#fee08b', 2 '#d73027')\n";
  else
    body << "set palette defined (0 '#d73027', 1 '#fee08b', 2 '#1a9850')\n";
  if (std::isfinite(lo) && hi > lo) body << "set cbrange [" << number(lo) << ":" << number(hi) << "]\n";
  body << "set xtics (";
  for (size_t i = 0; i < columns.size(); ++i)
    body << (i ? ", " : "") << tic_label(spec.columns[columns[i]].label) << " " << i;
  body << ")\nset xrange [-0.5:" << columns.size() - 0.5 << "]\nunset key\nset tics nomirror\n"
       << "set style fill solid 1.0 noborder\n";
  for (size_t p = 0; p < panels.size(); ++p) {
    if (panels.size() > 1) body << "set title " << quote(panels[p].title) << "\n";
    body << "set ytics (";
    for (size_t k = 0; k < panels[p].items.size(); ++k)
      body << (k ? ", " : "") << tic_label(spec.rows[panels[p].items[k]].label) << " " << k;
    body << ")\nset yrange [" << panels[p].items.size() - 0.5 << ":-0.5]\n";
    // Boxes rather than `with image`, so a missing cell leaves a blank square instead of an error.
    body << "plot " << quote(id + ".dat") << " index " << p
         << " using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, \\\n     '' index " << p
         << " using 1:2:4 with labels font ',9'\n";
  }
  if (panels.size() > 1) body << "unset multiplot\n";
  w.data = data.str();
  w.body = body.str();
  return w;
}

GnuplotPlot write_stream(const TableSpec& spec, const TableData& t, const std::string& id) {
  const FigureSpec& f = *spec.figure;
  GnuplotPlot w;
  std::ostringstream data, body;
  data << "# kvbench stream curves for " << spec.id << "; one block per series; columns: token position, "
       << (f.y == "perplexity" ? "perplexity" : "NLL (nats)") << " ("
       << (f.curve == "cumulative" ? "cumulative mean" : "trailing moving average over " + std::to_string(f.window) + " tokens")
       << ")\n";
  std::vector<std::string> titles;
  std::set<std::string> drawn;  // jobs already drawn: a column whose job ignores the row (Full) is one line
  for (size_t r = 0; r < spec.rows.size(); ++r)
    for (size_t c = 0; c < spec.columns.size(); ++c) {
      if (spec.is_aggregate_column(c)) continue;
      bool row_independent = spec.rows.size() > 1 && spec.rows[r].curve_file.empty();
      for (size_t k = 0; k < spec.rows.size() && row_independent; ++k)
        row_independent = t.cells[k][c].job == t.cells[r][c].job;
      if (spec.rows[r].curve_file.empty() && !drawn.insert(t.cells[r][c].job.dump()).second) continue;
      std::vector<double> nll;
      std::string warning;
      if (!spec.rows[r].curve_file.empty()) {
        std::string path = spec.rows[r].curve_file;
        if (!fs::exists(path) && !spec.path.empty()) path = (fs::path(spec.path).parent_path() / path).string();
        nll = read_curve_file(path);
      } else {
        nll = mean_curve(t.cells[r][c].results, &warning);
      }
      // One column: the row names the line. Several: "column (row header row)", or the column
      // alone when its job is the same in every row.
      std::string title = spec.rows[r].label;
      if (spec.columns.size() > 1)
        title = row_independent ? spec.columns[c].label
                                : spec.columns[c].label + " (" + (spec.row_header.empty() ? "" : spec.row_header + " ") +
                                      spec.rows[r].label + ")";
      if (nll.empty()) {
        w.warnings.push_back("stream figure " + spec.id + ": no curve for '" + title + "'" +
                             (warning.empty() ? " (no result)" : ": " + warning));
        continue;
      }
      const std::vector<double> y = smooth_curve(nll, f);
      const size_t step = std::max<size_t>(1, (y.size() + f.max_points - 1) / f.max_points);
      data << "# " << single_line(title) << "\n";
      for (size_t i = 0; i < y.size(); i += step) data << i + 1 << "\t" << number(y[i]) << "\n";
      if ((y.size() - 1) % step != 0) data << y.size() << "\t" << number(y.back()) << "\n";
      data << "\n\n";
      titles.push_back(title);
    }
  body << "set title " << quote(f.title.empty() ? spec.title : f.title) << "\n";
  body << axis_setup(f, f.x_label.empty() ? "token position" : f.x_label,
                     f.y_label.empty() ? (f.y == "perplexity" ? "perplexity" : "NLL (nats)") : f.y_label);
  body << "set grid\nset key outside right top\n";
  if (titles.empty()) {
    body << "set label 1 'no curves: run the jobs of this figure' at graph 0.5, 0.5 center\n"
         << "set xrange [0:1]\nset yrange [0:1]\nplot NaN notitle\n";
  } else {
    body << "plot ";
    for (size_t i = 0; i < titles.size(); ++i)
      body << (i ? ", \\\n     " : "") << (i ? "''" : quote(id + ".dat")) << " index " << i
           << " using 1:2 with lines lw 1.5 lc rgb '" << color(i) << "' title " << quote(titles[i]);
    body << "\n";
  }
  w.data = data.str();
  w.body = body.str();
  return w;
}

}  // namespace kvbench::harness
