#include "harness/check_baseline.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "harness/job_id.hpp"

namespace kvbench::harness {
namespace {

Tolerance tolerance_for(const nlohmann::json& tolerances, const std::string& metric) {
  const nlohmann::json& t = tolerances.contains(metric) ? tolerances[metric] : tolerances.value("default", nlohmann::json::object());
  Tolerance tol;
  tol.abs = t.is_object() ? t.value("abs", 0.0) : 0.0;
  tol.rel = t.is_object() ? t.value("rel", 0.0) : 0.0;
  return tol;
}

std::string number(const nlohmann::json& v) {
  if (v.is_null()) return "(absent)";
  if (!v.is_number_float()) return v.dump();
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.10g", v.get<double>());
  return buffer;
}

std::string tolerance_text(const Tolerance& t) {
  std::ostringstream s;
  s << "tol ";
  if (t.abs == 0 && t.rel == 0) return "exact";
  if (t.abs != 0) s << "abs " << t.abs;
  if (t.abs != 0 && t.rel != 0) s << " + ";
  if (t.rel != 0) s << "rel " << t.rel;
  return s.str();
}

}  // namespace

bool Tolerance::allows(double baseline, double current) const {
  if (std::isnan(baseline) || std::isnan(current)) return std::isnan(baseline) && std::isnan(current);
  return std::fabs(current - baseline) <= abs + rel * std::fabs(baseline);
}

bool CheckReport::passed() const {
  for (const auto& c : cells)
    if (c.status != CellDiff::Status::kOk) return false;
  return true;
}

std::string CheckReport::render(bool verbose) const {
  std::ostringstream out;
  int failed = 0;
  for (const auto& c : cells) {
    const char* label = "ok     ";
    switch (c.status) {
      case CellDiff::Status::kOk: break;
      case CellDiff::Status::kMoved: label = "MOVED  "; break;
      case CellDiff::Status::kMissingResult: label = "MISSING"; break;
      case CellDiff::Status::kNotInBaseline: label = "NEW    "; break;
      case CellDiff::Status::kNotInGrid: label = "GONE   "; break;
    }
    if (c.status != CellDiff::Status::kOk) ++failed;
    out << label << " " << c.description << "\n";
    if (c.status == CellDiff::Status::kMissingResult)
      out << "          no result" << (c.error.empty() ? "" : ": " + c.error) << "\n";
    if (c.status == CellDiff::Status::kNotInBaseline)
      out << "          this grid cell has no baseline (kvbench check --update records one)\n";
    if (c.status == CellDiff::Status::kNotInGrid)
      out << "          the baseline has this cell but the grid does not\n";
    if (c.status != CellDiff::Status::kMoved && !(verbose && c.status == CellDiff::Status::kOk)) continue;
    for (const auto& m : c.metrics) {
      if (c.status == CellDiff::Status::kMoved && m.ok && !verbose) continue;
      out << "          " << (m.ok ? "  " : "! ") << m.metric << ": " << number(m.current) << " vs baseline "
          << number(m.baseline);
      if (m.current.is_number() && m.baseline.is_number()) {
        char delta[40];
        std::snprintf(delta, sizeof delta, "%+.3g", m.current.get<double>() - m.baseline.get<double>());
        out << "  (diff " << delta << ", " << tolerance_text(m.tolerance) << ")";
      }
      out << "\n";
    }
  }
  out << (failed == 0 ? "check passed: " : "check FAILED: ") << cells.size() - failed << " of " << cells.size()
      << " cells within tolerance\n";
  return out.str();
}

void validate_baseline(const nlohmann::json& baseline, const std::string& where) {
  auto fail = [&](const std::string& message) { throw std::invalid_argument(where + ": " + message); };
  if (!baseline.is_object()) fail("a baseline must be a JSON object");
  for (auto it = baseline.begin(); it != baseline.end(); ++it)
    if (it.key() != "grid" && it.key() != "note" && it.key() != "tolerances" && it.key() != "cells")
      fail("field '" + it.key() + "' is not a baseline field (grid, note, tolerances, cells)");
  if (!baseline.contains("cells") || !baseline["cells"].is_array()) fail("field 'cells' must be a list");
  if (baseline.contains("grid") && !baseline["grid"].is_string()) fail("field 'grid' must be a path");
  std::map<std::string, size_t> first_index;  // canonical cell -> its index
  std::set<std::string> metric_names;
  for (size_t i = 0; i < baseline["cells"].size(); ++i) {
    const auto& c = baseline["cells"][i];
    const std::string field = "field 'cells[" + std::to_string(i) + "]'";
    if (!c.is_object() || !c.contains("cell") || !c["cell"].is_object() || !c.contains("metrics") ||
        !c["metrics"].is_object())
      fail(field + " needs 'cell' and 'metrics' objects");
    for (auto it = c.begin(); it != c.end(); ++it)
      if (it.key() != "cell" && it.key() != "description" && it.key() != "id" && it.key() != "metrics")
        fail(field + ": '" + it.key() + "' is not a cell field (cell, description, id, metrics)");
    // A cell without metrics would pass whatever the run gives.
    if (c["metrics"].empty()) fail(field + ": 'metrics' is empty (kvbench check --update records them)");
    for (auto m = c["metrics"].begin(); m != c["metrics"].end(); ++m) metric_names.insert(m.key());
    const auto [at, inserted] = first_index.emplace(canonical_json(c["cell"]), i);
    if (!inserted) fail(field + " repeats the cell of cells[" + std::to_string(at->second) + "]");
  }
  if (baseline.contains("tolerances")) {
    const auto& t = baseline["tolerances"];
    if (!t.is_object()) fail("field 'tolerances' must be an object");
    for (auto it = t.begin(); it != t.end(); ++it) {
      if (!it->is_object()) fail("field 'tolerances." + it.key() + "' must be {abs, rel}");
      // A misspelt metric name would leave the real metric at the default tolerance unnoticed.
      if (it.key() != "default" && !metric_names.count(it.key()))
        fail("field 'tolerances." + it.key() + "': no cell has a metric of this name");
      for (auto k = it->begin(); k != it->end(); ++k)
        if ((k.key() != "abs" && k.key() != "rel") || !k->is_number() || k->get<double>() < 0)
          fail("field 'tolerances." + it.key() + "." + k.key() + "' must be abs or rel, a number >= 0");
    }
  }
}

CheckReport compare_to_baseline(const nlohmann::json& baseline, const std::vector<CurrentCell>& current) {
  validate_baseline(baseline, "baseline");
  const nlohmann::json tolerances = baseline.value("tolerances", default_tolerances());
  std::map<std::string, const nlohmann::json*> expected;
  for (const auto& c : baseline["cells"]) expected[canonical_json(c["cell"])] = &c;
  CheckReport report;
  for (const auto& cur : current) {
    CellDiff diff;
    diff.cell = cur.cell;
    diff.description = cur.description;
    auto it = expected.find(canonical_json(cur.cell));
    if (it == expected.end()) {
      diff.status = CellDiff::Status::kNotInBaseline;
      report.cells.push_back(diff);
      continue;
    }
    const nlohmann::json& base = (*it->second)["metrics"];
    expected.erase(it);
    if (cur.metrics.is_null()) {
      diff.status = CellDiff::Status::kMissingResult;
      diff.error = cur.error;
      report.cells.push_back(diff);
      continue;
    }
    for (auto m = base.begin(); m != base.end(); ++m) {
      MetricDiff md;
      md.metric = m.key();
      md.baseline = m.value();
      md.current = cur.metrics.contains(m.key()) ? cur.metrics[m.key()] : nlohmann::json();
      md.tolerance = tolerance_for(tolerances, m.key());
      if (md.current.is_null())
        md.ok = false;
      else if (md.baseline.is_number() && md.current.is_number())
        md.ok = md.tolerance.allows(md.baseline.get<double>(), md.current.get<double>());
      else
        md.ok = md.baseline == md.current;
      if (!md.ok) diff.status = CellDiff::Status::kMoved;
      diff.metrics.push_back(md);
    }
    // A metric the baseline does not hold is unchecked: it fails until --update records it.
    for (auto m = cur.metrics.begin(); m != cur.metrics.end(); ++m) {
      if (!m->is_primitive() || base.contains(m.key())) continue;
      MetricDiff md;
      md.metric = m.key();
      md.current = m.value();
      md.tolerance = tolerance_for(tolerances, m.key());
      md.ok = false;
      diff.status = CellDiff::Status::kMoved;
      diff.metrics.push_back(md);
    }
    report.cells.push_back(diff);
  }
  for (const auto& [key, c] : expected) {
    CellDiff diff;
    diff.cell = (*c)["cell"];
    diff.description = c->value("description", key);
    diff.status = CellDiff::Status::kNotInGrid;
    report.cells.push_back(diff);
  }
  return report;
}

nlohmann::json default_tolerances() {
  // Float metrics move by ~1e-7 relative between CPUs and thread counts (summation order);
  // counts must not move at all.
  return {{"default", {{"abs", 1e-6}, {"rel", 1e-6}}},
          {"mean_nll", {{"abs", 1e-4}}},
          {"perplexity", {{"rel", 1e-4}}},
          {"tokens", {{"abs", 0}}},
          {"max_cache_len", {{"abs", 0}}}};
}

nlohmann::json make_baseline(const std::string& grid_path, const std::vector<CurrentCell>& current,
                             const nlohmann::json& previous) {
  nlohmann::json baseline = {
      {"grid", grid_path},
      {"note", "kvbench check " + grid_path + " --baseline <this file> [--update]; tolerances per metric: "
               "|current - baseline| <= abs + rel*|baseline|"},
      {"tolerances", previous.is_object() && previous.contains("tolerances") ? previous["tolerances"] : default_tolerances()},
      {"cells", nlohmann::json::array()}};
  for (const auto& cur : current) {
    if (cur.metrics.is_null()) throw std::runtime_error("cannot record a baseline: no result for " + cur.description +
                                                        (cur.error.empty() ? "" : " (" + cur.error + ")"));
    nlohmann::json metrics = nlohmann::json::object();
    for (auto it = cur.metrics.begin(); it != cur.metrics.end(); ++it)
      if (it->is_primitive()) metrics[it.key()] = it.value();
    baseline["cells"].push_back({{"cell", cur.cell}, {"description", cur.description}, {"id", cur.id}, {"metrics", metrics}});
  }
  return baseline;
}

}  // namespace kvbench::harness
