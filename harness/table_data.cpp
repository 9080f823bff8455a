#include "harness/table_data.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

namespace kvbench::harness {
namespace {

using nlohmann::json;

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
}  // namespace

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

}  // namespace kvbench::harness
