#include "harness/table_render.hpp"

#include <sstream>

#include "harness/output_escaping.hpp"

namespace kvbench::harness {
namespace {

using nlohmann::json;

int decimals_of(const TableSpec& spec, size_t c) { return cell_metric(spec, c).decimals; }

// The lines every rendering starts or ends with, as plain text.
struct Notes {
  std::string source;
  std::string models;
  std::string qualitative;
  std::string metric;
  std::string paper_numbers;
  std::string missing;
  std::vector<std::string> more;
};

std::string metric_text(const MetricSpec& m) {
  std::string paths;
  for (const auto& p : m.paths) paths += (paths.empty() ? "" : ", ") + p;
  std::string s = m.label.empty() ? paths : m.label + " (" + (m.combine.empty() ? "" : m.combine + " of ") + paths + ")";
  if (m.scale != 1.0) s += ", ×" + format_value(m.scale, 0);
  if (m.offset != 0.0) s += (m.offset > 0 ? ", +" : ", ") + format_value(m.offset, 0);
  if (!m.ratio_to_row.empty()) s += ", as a ratio to row '" + m.ratio_to_row + "'";
  s += m.higher_is_better ? "; higher is better" : "; lower is better";
  return s;
}

std::string column_title(const AxisEntry& c) { return c.group.empty() ? c.label : c.group + " " + c.label; }

Notes make_notes(const TableData& t) {
  const TableSpec& s = *t.spec;
  Notes n;
  n.source = s.paper_name + ", " + s.paper_source + (s.paper_file.empty() ? "" : " (" + s.paper_file + ")") + ".";
  std::string ours;
  for (const auto& m : t.our_models) ours += (ours.empty() ? "" : ", ") + m;
  n.models = "Paper's model: " + s.paper_model + ". Ours: " + (ours.empty() ? "(none)" : ours) + ".";
  if (!t.same_model_as_paper)
    n.qualitative = "Our model differs from the paper's (" + (ours.empty() ? std::string("none") : ours) + " vs " +
                    s.paper_model + "): the comparison is qualitative — compare orderings and trends, not values.";
  n.metric = "Metric: " + metric_text(s.metric) + ".";
  bool per_column = false;
  for (const auto& c : s.columns) per_column = per_column || c.metric.has_value();
  if (per_column) n.metric += " Some columns use their own metric (named in the column).";
  if (!s.has_paper_numbers())
    n.paper_numbers = "The paper gives no numbers for this " + s.paper_source + "." +
                      (s.paper_numbers_note.empty() ? "" : " " + s.paper_numbers_note);
  else if (!s.paper_numbers_note.empty())
    n.paper_numbers = "Paper's numbers: " + s.paper_numbers_note;
  if (t.missing_cells > 0)
    n.missing = "Missing: " + std::to_string(t.missing_cells) + " of " + std::to_string(t.job_cells) + " cells (" +
                std::to_string(t.missing_jobs) + " of " + std::to_string(t.total_jobs) +
                " jobs have no result); `kvbench table " + (s.path.empty() ? s.id : s.path) +
                " --print-grid` prints the grid that runs them.";
  std::string ranks;
  for (size_t c = 0; c < s.columns.size(); ++c)
    if (t.rank_agreement[c])
      ranks += (ranks.empty() ? "" : "; ") + column_title(s.columns[c]) + " " + format_value(*t.rank_agreement[c], 2) +
               " (" + std::to_string(t.rank_rows[c]) + " rows)";
  if (!ranks.empty())
    n.more.push_back("Rank agreement with the paper (Kendall's tau-b over the rows with both numbers; 1 = same order): " +
                     ranks + ".");
  bool any_n = false;
  for (const auto& row : t.cells)
    for (const auto& c : row) any_n = any_n || c.n() > 1;
  if (any_n) n.more.push_back("Cells with n > 1: mean ± sample standard deviation over n results (seeds).");
  for (const auto& w : t.warnings) n.more.push_back(w);
  for (const auto& note : s.notes) n.more.push_back(note);
  return n;
}


std::string paper_text(const CellValue& cell, int decimals) {
  return cell.paper ? format_value(*cell.paper, decimals) : kDash;
}
std::string diff_text(const CellValue& cell, int decimals) {
  return cell.diff ? format_diff(*cell.diff, decimals) : kDash;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_number(const std::optional<double>& v) {
  if (!v) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", *v);
  return buf;
}

// Consecutive runs of equal, non-empty groups: (group, first index, count).
struct Span { std::string group; size_t first, count; };
std::vector<Span> column_spans(const TableSpec& s) {
  std::vector<Span> spans;
  for (size_t c = 0; c < s.columns.size(); ++c) {
    if (!spans.empty() && spans.back().group == s.columns[c].group) ++spans.back().count;
    else spans.push_back({s.columns[c].group, c, 1});
  }
  return spans;
}
bool has_column_groups(const TableSpec& s) {
  for (const auto& c : s.columns) if (!c.group.empty()) return true;
  return false;
}

}  // namespace

std::string render_markdown(const TableData& t) {
  const TableSpec& s = *t.spec;
  const bool paper = s.has_paper_numbers();
  std::ostringstream out;
  out << "### " << markdown_text(s.title) << "\n\n";
  Notes notes = make_notes(t);
  out << markdown_text(notes.source) << " " << markdown_text(notes.models) << "\n\n";
  if (!notes.qualitative.empty()) out << "> " << markdown_text(notes.qualitative) << "\n\n";
  out << markdown_text(notes.metric) << "\n\n";
  if (!notes.paper_numbers.empty()) out << markdown_text(notes.paper_numbers) << "\n\n";
  // Header.
  out << "| " << markdown_text(s.row_header) << " |";
  for (const auto& c : s.columns) {
    const std::string title = markdown_text(column_title(c));
    if (paper) out << " " << title << " ours | " << title << " paper | " << title << " Δ |";
    else out << " " << title << " |";
  }
  out << "\n|---|";
  for (size_t c = 0; c < s.columns.size(); ++c) out << (paper ? "---:|---:|---:|" : "---:|");
  out << "\n";
  std::string group;
  const size_t width = 1 + s.columns.size() * (paper ? 3 : 1);
  for (size_t r = 0; r < s.rows.size(); ++r) {
    if (s.rows[r].group != group) {
      group = s.rows[r].group;
      if (!group.empty()) {
        out << "| **" << markdown_text(group) << "** |";
        for (size_t k = 1; k < width; ++k) out << " |";
        out << "\n";
      }
    }
    out << "| " << markdown_text(s.rows[r].label) << " |";
    for (size_t c = 0; c < s.columns.size(); ++c) {
      const CellValue& cell = t.cells[r][c];
      const int d = decimals_of(s, c);
      out << " " << format_ours(cell, d) << " |";
      if (paper) out << " " << paper_text(cell, d) << " | " << diff_text(cell, d) << " |";
    }
    out << "\n";
  }
  out << "\n";
  if (!notes.missing.empty()) out << markdown_text(notes.missing) << "\n\n";
  for (const auto& m : notes.more) out << "- " << markdown_text(m) << "\n";
  if (!notes.more.empty()) out << "\n";
  return out.str();
}

std::string render_csv(const TableData& t) {
  const TableSpec& s = *t.spec;
  std::ostringstream out;
  out << "row_group,row,column_group,column,metric,ours,ours_std,n,paper,diff,status\n";
  for (size_t r = 0; r < s.rows.size(); ++r)
    for (size_t c = 0; c < s.columns.size(); ++c) {
      const CellValue& cell = t.cells[r][c];
      const MetricSpec m = cell_metric(s, r, c);
      std::string metric = s.is_aggregate_column(c) ? s.columns[c].aggregate : "";
      if (metric.empty()) for (const auto& p : m.paths) metric += (metric.empty() ? "" : "+") + p;
      if (!m.combine.empty() && !s.is_aggregate_column(c)) metric = m.combine + "(" + metric + ")";
      const std::string status = !cell.ours ? "missing" : cell.ambiguous ? "ambiguous" : "ok";
      out << csv_field(s.rows[r].group) << "," << csv_field(s.rows[r].label) << "," << csv_field(s.columns[c].group)
          << "," << csv_field(s.columns[c].label) << "," << csv_field(metric) << "," << csv_number(cell.ours) << ","
          << (cell.n() > 1 ? csv_number(cell.std) : "") << "," << cell.n() << "," << csv_number(cell.paper) << ","
          << csv_number(cell.diff) << "," << status << "\n";
    }
  return out.str();
}

std::string render_latex(const TableData& t) {
  const TableSpec& s = *t.spec;
  const bool paper = s.has_paper_numbers();
  const size_t per = paper ? 3 : 1;
  const size_t width = 1 + s.columns.size() * per;
  Notes notes = make_notes(t);
  std::ostringstream out;
  out << "% " << latex_text(s.title) << "\n% Generated by `kvbench table " << single_line(s.path)
      << "`; needs \\usepackage{booktabs}.\n";
  out << "\\begin{table}[t]\n\\centering\n\\small\n";
  out << "\\caption{" << latex_text(s.title) << ". " << latex_text(notes.source) << " " << latex_text(notes.models);
  if (!notes.qualitative.empty()) out << " " << latex_text(notes.qualitative);
  out << "}\n\\label{tab:" << s.id << "}\n";
  out << "\\begin{tabular}{l";
  for (size_t c = 0; c < s.columns.size(); ++c) out << (paper ? "rrr" : "r");
  out << "}\n\\toprule\n";
  if (has_column_groups(s)) {
    for (const auto& span : column_spans(s)) {
      out << " & ";
      if (span.group.empty()) { for (size_t k = 1; k < span.count * per; ++k) out << " & "; continue; }
      out << "\\multicolumn{" << span.count * per << "}{c}{" << latex_text(span.group) << "}";
    }
    out << " \\\\\n";
    for (const auto& span : column_spans(s))
      if (!span.group.empty())
        out << "\\cmidrule(lr){" << 2 + span.first * per << "-" << 1 + (span.first + span.count) * per << "}";
    out << "\n";
  }
  if (paper) {
    for (const auto& c : s.columns) out << " & \\multicolumn{3}{c}{" << latex_text(c.label) << "}";
    out << " \\\\\n";
    for (size_t c = 0; c < s.columns.size(); ++c) out << "\\cmidrule(lr){" << 2 + 3 * c << "-" << 4 + 3 * c << "}";
    out << "\n";
    out << latex_text(s.row_header);
    for (size_t c = 0; c < s.columns.size(); ++c) out << " & Ours & Paper & $\\Delta$";
    out << " \\\\\n";
  } else {
    out << latex_text(s.row_header);
    for (const auto& c : s.columns) out << " & " << latex_text(c.label);
    out << " \\\\\n";
  }
  out << "\\midrule\n";
  std::string group;
  for (size_t r = 0; r < s.rows.size(); ++r) {
    if (s.rows[r].group != group) {
      group = s.rows[r].group;
      if (!group.empty()) out << "\\multicolumn{" << width << "}{l}{\\textit{" << latex_text(group) << "}} \\\\\n";
    }
    out << latex_text(s.rows[r].label);
    for (size_t c = 0; c < s.columns.size(); ++c) {
      const CellValue& cell = t.cells[r][c];
      const int d = decimals_of(s, c);
      out << " & " << latex_text(format_ours(cell, d));
      if (paper) out << " & " << latex_text(paper_text(cell, d)) << " & " << latex_text(diff_text(cell, d));
    }
    out << " \\\\\n";
  }
  out << "\\bottomrule\n\\end{tabular}\n";
  std::vector<std::string> foot;
  if (!notes.missing.empty()) foot.push_back(notes.missing);
  if (!notes.paper_numbers.empty()) foot.push_back(notes.paper_numbers);
  foot.push_back(notes.metric);
  if (!foot.empty()) {
    out << "\\par\\footnotesize ";
    for (size_t i = 0; i < foot.size(); ++i) out << (i ? " " : "") << latex_text(foot[i]);
    out << "\n";
  }
  out << "\\end{table}\n";
  return out.str();
}

std::string render_html(const TableData& t) {
  const TableSpec& s = *t.spec;
  const bool paper = s.has_paper_numbers();
  const size_t per = paper ? 3 : 1;
  Notes notes = make_notes(t);
  std::ostringstream out;
  out << "<section class=\"table\" id=\"" << html_escape(s.id) << "\">\n<h2>" << html_escape(s.title) << "</h2>\n";
  out << "<p class=\"source\">" << html_escape(notes.source) << " " << html_escape(notes.models) << " <code>"
      << html_escape(s.path) << "</code></p>\n";
  if (!notes.qualitative.empty()) out << "<p class=\"qualitative\">" << html_escape(notes.qualitative) << "</p>\n";
  out << "<p>" << html_escape(notes.metric) << "</p>\n";
  if (!notes.paper_numbers.empty()) out << "<p>" << html_escape(notes.paper_numbers) << "</p>\n";
  out << "<table>\n<thead>\n";
  if (has_column_groups(s)) {
    out << "<tr><th></th>";
    for (const auto& span : column_spans(s))
      out << "<th colspan=\"" << span.count * per << "\">" << html_escape(span.group) << "</th>";
    out << "</tr>\n";
  }
  out << "<tr><th>" << (paper ? "" : html_escape(s.row_header)) << "</th>";
  for (const auto& c : s.columns) out << "<th colspan=\"" << per << "\">" << html_escape(c.label) << "</th>";
  out << "</tr>\n";
  if (paper) {
    out << "<tr><th>" << html_escape(s.row_header) << "</th>";
    for (size_t c = 0; c < s.columns.size(); ++c) out << "<th>ours</th><th>paper</th><th>Δ</th>";
    out << "</tr>\n";
  }
  out << "</thead>\n<tbody>\n";
  std::string group;
  for (size_t r = 0; r < s.rows.size(); ++r) {
    if (s.rows[r].group != group) {
      group = s.rows[r].group;
      if (!group.empty())
        out << "<tr class=\"group\"><td colspan=\"" << 1 + s.columns.size() * per << "\">" << html_escape(group)
            << "</td></tr>\n";
    }
    out << "<tr><th>" << html_escape(s.rows[r].label) << "</th>";
    for (size_t c = 0; c < s.columns.size(); ++c) {
      const CellValue& cell = t.cells[r][c];
      const int d = decimals_of(s, c);
      out << "<td class=\"ours" << (cell.ours ? "" : " missing") << "\">" << html_escape(format_ours(cell, d)) << "</td>";
      if (paper)
        out << "<td class=\"paper\">" << html_escape(paper_text(cell, d)) << "</td><td class=\"diff\">"
            << html_escape(diff_text(cell, d)) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
  if (!notes.missing.empty()) out << "<p class=\"missing\">" << html_escape(notes.missing) << "</p>\n";
  if (!notes.more.empty()) {
    out << "<ul class=\"notes\">\n";
    for (const auto& m : notes.more) out << "<li>" << html_escape(m) << "</li>\n";
    out << "</ul>\n";
  }
  out << "</section>\n";
  return out.str();
}

}  // namespace kvbench::harness
