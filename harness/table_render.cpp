#include "harness/table_render.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace kvbench::harness {
namespace {

using nlohmann::json;

const char* kDash = "—";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string model_name(const std::string& model) {
  std::string m = model;
  while (!m.empty() && m.back() == '/') m.pop_back();
  return std::filesystem::path(m).filename().string();
}

// Results in one cell that differ in anything but the seed are different configurations.
void check_ambiguity(CellValue& cell) {
  std::vector<json> specs;
  std::map<std::string, int> configs;
  for (const auto* r : cell.results) {
    json spec = canonical_spec(r->json["spec"]);
    spec.erase("seed");
    specs.push_back(spec);
    configs[json({{"spec", spec}, {"checksums", r->json.value("checksums", json())}}).dump()] = 1;
  }
  if (configs.size() <= 1) return;
  cell.ambiguous = true;
  std::set<std::string> differing;
  for (size_t i = 1; i < specs.size(); ++i) {
    for (auto it = specs[i].begin(); it != specs[i].end(); ++it)
      if (!specs[0].contains(it.key()) || specs[0][it.key()] != it.value()) differing.insert(it.key());
    for (auto it = specs[0].begin(); it != specs[0].end(); ++it)
      if (!specs[i].contains(it.key())) differing.insert(it.key());
    if (cell.results[i]->json.value("checksums", json()) != cell.results[0]->json.value("checksums", json()))
      differing.insert("checksums");
  }
  for (const auto& d : differing) cell.ambiguity += (cell.ambiguity.empty() ? "" : ", ") + d;
}

std::string cell_name(const TableSpec& spec, size_t r, size_t c) {
  auto name = [](const AxisEntry& e) { return e.group.empty() ? e.label : e.group + " / " + e.label; };
  return "'" + name(spec.rows[r]) + "' x '" + name(spec.columns[c]) + "'";
}

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

std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

std::string tex_escape(const std::string& s) {
  // Unicode that LaTeX's default fonts lack, as math or text commands.
  static const std::vector<std::pair<std::string, std::string>> symbols = {
      {"±", "$\\pm$"},        {"—", "---"},           {"–", "--"},          {"Δ", "$\\Delta$"},
      {"×", "$\\times$"},     {"‡", "$^\\ddagger$"}, {"−", "$-$"},          {"λ", "$\\lambda$"},
      {"♥", "$\\heartsuit$"}, {"♦", "$\\diamondsuit$"}, {"≤", "$\\leq$"}, {"≥", "$\\geq$"},
      {"…", "\\dots{}"}};
  std::string out;
  bool code = false;  // `command` -> \texttt{command}
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    switch (ch) {
      case '%': case '&': case '#': case '_': case '$': case '{': case '}': out += '\\'; out += ch; continue;
      case '~': out += "\\textasciitilde{}"; continue;
      case '^': out += "\\textasciicircum{}"; continue;
      case '\\': out += "\\textbackslash{}"; continue;
      case '<': out += "\\textless{}"; continue;
      case '>': out += "\\textgreater{}"; continue;
      case '`': out += code ? "}" : "\\texttt{"; code = !code; continue;
      default: break;
    }
    bool replaced = false;
    for (const auto& [from, to] : symbols)
      if (s.compare(i, from.size(), from) == 0) {
        out += to;
        i += from.size() - 1;
        replaced = true;
        break;
      }
    if (!replaced) out += ch;
  }
  if (code) out += "}";
  return out;
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

std::string html_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string format_value(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  // "-0.0" reads as a sign that is not there.
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string format_diff(double v, int decimals) {
  std::string s = format_value(v, decimals);
  if (s[0] != '-' && s.find_first_not_of("0.") != std::string::npos) s = "+" + s;
  return s;
}

std::string format_ours(const CellValue& cell, int decimals) {
  if (!cell.ours) return kDash;
  std::string s = format_value(*cell.ours, decimals);
  if (cell.n() > 1) s += " ± " + format_value(cell.std, decimals) + " (n=" + std::to_string(cell.n()) + ")";
  if (cell.ambiguous) s += " ‡";
  return s;
}

std::optional<double> kendall_tau_b(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = std::min(a.size(), b.size());
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) ++ties_a;
      else if (db == 0) ++ties_b;
      else if ((da > 0) == (db > 0)) ++concordant;
      else ++discordant;
    }
  const double denominator = std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
  if (denominator == 0) return std::nullopt;
  return (concordant - discordant) / denominator;
}

TableData compute_table(const TableSpec& spec, const ResultsIndex& results, const json& overrides) {
  TableData t;
  t.spec = &spec;
  t.cells.assign(spec.rows.size(), std::vector<CellValue>(spec.columns.size()));
  std::map<std::string, size_t> job_results;  // job (with seed) -> number of results
  std::set<std::string> models, job_models;
  for (size_t r = 0; r < spec.rows.size(); ++r) {
    for (size_t c = 0; c < spec.columns.size(); ++c) {
      CellValue& cell = t.cells[r][c];
      if (r < spec.rows.size() && c < spec.rows[r].paper.size()) cell.paper = spec.rows[r].paper[c];
      if (spec.is_aggregate_column(c) || !spec.rows[r].curve_file.empty()) continue;  // no job: nothing to match
      cell.job = cell_job(spec, r, c, overrides);
      if (cell.job.contains("model")) job_models.insert(cell.job["model"].get<std::string>());
      ++t.job_cells;
      const MetricSpec metric = cell_metric(spec, r, c);
      auto matched = results.match(cell.job, spec.seeds);
      // Missing jobs: one per seed the spec asks for (or one per job when it names none).
      json job_key = cell.job;
      job_key.erase("seed");
      if (spec.seeds.empty()) {
        job_results[job_key.dump()] += matched.size();
      } else {
        for (int64_t seed : spec.seeds) {
          json k = job_key;
          k["seed"] = seed;
          size_t count = 0;
          for (const auto* m : matched) count += m->json["spec"].value("seed", int64_t{0}) == seed;
          job_results[k.dump()] += count;
        }
      }
      for (const auto* m : matched) {
        std::string why;
        auto v = extract_metric(metric, m->json, &why);
        if (!v) {
          cell.metric_errors.push_back(m->file + ": " + why);
          continue;
        }
        cell.values.push_back(*v);
        cell.results.push_back(m);
        if (m->json["spec"].contains("model") && m->json["spec"]["model"].is_string())
          models.insert(m->json["spec"]["model"].get<std::string>());
      }
      if (!cell.values.empty()) {
        double sum = 0;
        for (double v : cell.values) sum += v;
        const double mean = sum / static_cast<double>(cell.values.size());
        double ss = 0;
        for (double v : cell.values) ss += (v - mean) * (v - mean);
        cell.ours = mean;
        cell.std = cell.values.size() > 1 ? std::sqrt(ss / static_cast<double>(cell.values.size() - 1)) : 0.0;
      }
      check_ambiguity(cell);
      if (cell.ambiguous)
        t.warnings.push_back("‡ " + cell_name(spec, r, c) + ": the results differ in " + cell.ambiguity +
                             "; all are averaged — fix the spec's fields or remove stale results.");
      for (const auto& e : cell.metric_errors)
        t.warnings.push_back("Cell " + cell_name(spec, r, c) + ": result without the metric: " + e);
    }
  }
  // Ratios to a reference row (ratio of means; the spread is not carried over).
  for (size_t c = 0; c < spec.columns.size(); ++c) {
    const std::string& ref = cell_metric(spec, c).ratio_to_row;
    if (ref.empty() || spec.is_aggregate_column(c)) continue;
    size_t ref_row = 0;
    while (spec.rows[ref_row].label != ref) ++ref_row;
    const std::optional<double> base = t.cells[ref_row][c].ours;
    for (size_t r = 0; r < spec.rows.size(); ++r) {
      CellValue& cell = t.cells[r][c];
      if (r == ref_row) continue;
      cell.ours = cell.ours && base && *base != 0 ? std::optional<double>(*cell.ours / *base) : std::nullopt;
      cell.std = 0;
      if (cell.values.size() > 1) cell.values.resize(1);
    }
    if (base && *base != 0) {
      t.cells[ref_row][c].ours = 1.0;
      t.cells[ref_row][c].std = 0;
      if (t.cells[ref_row][c].values.size() > 1) t.cells[ref_row][c].values.resize(1);
    }
  }
  // Aggregate columns: the mean of the row's other columns, when all of them are present.
  for (size_t r = 0; r < spec.rows.size(); ++r)
    for (size_t c = 0; c < spec.columns.size(); ++c) {
      if (!spec.is_aggregate_column(c)) continue;
      double sum = 0;
      size_t count = 0;
      bool complete = true;
      for (size_t k = 0; k < spec.columns.size(); ++k) {
        if (spec.is_aggregate_column(k)) continue;
        if (!t.cells[r][k].ours) complete = false;
        else { sum += *t.cells[r][k].ours; ++count; }
      }
      if (complete && count > 0) t.cells[r][c].ours = sum / static_cast<double>(count);
    }
  for (size_t r = 0; r < spec.rows.size(); ++r)
    for (size_t c = 0; c < spec.columns.size(); ++c) {
      CellValue& cell = t.cells[r][c];
      if (cell.ours && cell.paper) cell.diff = *cell.ours - *cell.paper;
      if (!spec.is_aggregate_column(c) && spec.rows[r].curve_file.empty() && !cell.ours) ++t.missing_cells;
    }
  t.rank_agreement.assign(spec.columns.size(), std::nullopt);
  t.rank_rows.assign(spec.columns.size(), 0);
  for (size_t c = 0; c < spec.columns.size(); ++c) {
    std::vector<double> ours, paper;
    for (size_t r = 0; r < spec.rows.size(); ++r)
      if (t.cells[r][c].ours && t.cells[r][c].paper) {
        ours.push_back(*t.cells[r][c].ours);
        paper.push_back(*t.cells[r][c].paper);
      }
    t.rank_rows[c] = ours.size();
    if (ours.size() >= 3) t.rank_agreement[c] = kendall_tau_b(ours, paper);
  }
  t.total_jobs = job_results.size();
  for (const auto& [job, count] : job_results) t.missing_jobs += count == 0;
  const auto& shown = models.empty() ? job_models : models;
  t.our_models.assign(shown.begin(), shown.end());
  // Same model: every one of ours is named by the paper's model or its ids (case-insensitive).
  std::set<std::string> paper_names = {lower(spec.paper_model)};
  for (const auto& id : spec.paper_model_ids) {
    paper_names.insert(lower(id));
    paper_names.insert(lower(model_name(id)));
  }
  t.same_model_as_paper = !t.our_models.empty();
  for (const auto& m : t.our_models)
    if (!paper_names.count(lower(m)) && !paper_names.count(lower(model_name(m)))) t.same_model_as_paper = false;
  return t;
}

std::string render_markdown(const TableData& t) {
  const TableSpec& s = *t.spec;
  const bool paper = s.has_paper_numbers();
  std::ostringstream out;
  out << "### " << s.title << "\n\n";
  Notes notes = make_notes(t);
  out << notes.source << " " << notes.models << "\n\n";
  if (!notes.qualitative.empty()) out << "> " << notes.qualitative << "\n\n";
  out << notes.metric << "\n\n";
  if (!notes.paper_numbers.empty()) out << notes.paper_numbers << "\n\n";
  // Header.
  out << "| " << md_escape(s.row_header) << " |";
  for (const auto& c : s.columns) {
    const std::string title = md_escape(column_title(c));
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
        out << "| **" << md_escape(group) << "** |";
        for (size_t k = 1; k < width; ++k) out << " |";
        out << "\n";
      }
    }
    out << "| " << md_escape(s.rows[r].label) << " |";
    for (size_t c = 0; c < s.columns.size(); ++c) {
      const CellValue& cell = t.cells[r][c];
      const int d = decimals_of(s, c);
      out << " " << format_ours(cell, d) << " |";
      if (paper) out << " " << paper_text(cell, d) << " | " << diff_text(cell, d) << " |";
    }
    out << "\n";
  }
  out << "\n";
  if (!notes.missing.empty()) out << notes.missing << "\n\n";
  for (const auto& m : notes.more) out << "- " << md_escape(m) << "\n";
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
  out << "% " << s.title << "\n% Generated by `kvbench table " << s.path << "`; needs \\usepackage{booktabs}.\n";
  out << "\\begin{table}[t]\n\\centering\n\\small\n";
  out << "\\caption{" << tex_escape(s.title) << ". " << tex_escape(notes.source) << " " << tex_escape(notes.models);
  if (!notes.qualitative.empty()) out << " " << tex_escape(notes.qualitative);
  out << "}\n\\label{tab:" << s.id << "}\n";
  out << "\\begin{tabular}{l";
  for (size_t c = 0; c < s.columns.size(); ++c) out << (paper ? "rrr" : "r");
  out << "}\n\\toprule\n";
  if (has_column_groups(s)) {
    for (const auto& span : column_spans(s)) {
      out << " & ";
      if (span.group.empty()) { for (size_t k = 1; k < span.count * per; ++k) out << " & "; continue; }
      out << "\\multicolumn{" << span.count * per << "}{c}{" << tex_escape(span.group) << "}";
    }
    out << " \\\\\n";
    for (const auto& span : column_spans(s))
      if (!span.group.empty())
        out << "\\cmidrule(lr){" << 2 + span.first * per << "-" << 1 + (span.first + span.count) * per << "}";
    out << "\n";
  }
  if (paper) {
    for (const auto& c : s.columns) out << " & \\multicolumn{3}{c}{" << tex_escape(c.label) << "}";
    out << " \\\\\n";
    for (size_t c = 0; c < s.columns.size(); ++c) out << "\\cmidrule(lr){" << 2 + 3 * c << "-" << 4 + 3 * c << "}";
    out << "\n";
    out << tex_escape(s.row_header);
    for (size_t c = 0; c < s.columns.size(); ++c) out << " & Ours & Paper & $\\Delta$";
    out << " \\\\\n";
  } else {
    out << tex_escape(s.row_header);
    for (const auto& c : s.columns) out << " & " << tex_escape(c.label);
    out << " \\\\\n";
  }
  out << "\\midrule\n";
  std::string group;
  for (size_t r = 0; r < s.rows.size(); ++r) {
    if (s.rows[r].group != group) {
      group = s.rows[r].group;
      if (!group.empty()) out << "\\multicolumn{" << width << "}{l}{\\textit{" << tex_escape(group) << "}} \\\\\n";
    }
    out << tex_escape(s.rows[r].label);
    for (size_t c = 0; c < s.columns.size(); ++c) {
      const CellValue& cell = t.cells[r][c];
      const int d = decimals_of(s, c);
      out << " & " << tex_escape(format_ours(cell, d));
      if (paper) out << " & " << tex_escape(paper_text(cell, d)) << " & " << tex_escape(diff_text(cell, d));
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
    for (size_t i = 0; i < foot.size(); ++i) out << (i ? " " : "") << tex_escape(foot[i]);
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
