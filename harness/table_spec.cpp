#include "harness/table_spec.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "base/known_fields.hpp"
#include "datasets/json_parse.hpp"
#include "harness/output_escaping.hpp"
#include "harness/plain_name.hpp"
#include "policies/budget.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::harness {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& origin, const std::string& field, const std::string& message) {
  throw std::invalid_argument(origin + ": " + field + ": " + message);
}

// Rejects keys outside `allowed`, so a typo never silently drops a setting.
void check_keys(const json& object, const std::vector<std::string>& allowed, const std::string& origin,
                const std::string& where) {
  base::require_known_fields(object, allowed, origin, where);
}

// A spec's text is printed into Markdown, LaTeX, gnuplot and HTML: one line, no control characters.
std::string text_of(const json& value, const std::string& origin, const std::string& field) {
  if (!value.is_string()) fail(origin, field, "must be a string, got " + value.dump());
  const std::string text = value.get<std::string>();
  if (has_control_character(text))
    fail(origin, field, "must be one line of text without control characters (newline, tab, ...), got " + value.dump());
  return text;
}

std::string format_bound(double v) { return std::to_string(static_cast<int64_t>(v)); }

std::string get_string(const json& object, const std::string& key, const std::string& origin, const std::string& where,
                       bool required = false, const std::string& fallback = "") {
  if (!object.contains(key)) {
    if (required) fail(origin, where + key, "required field is missing");
    return fallback;
  }
  return text_of(object[key], origin, where + key);
}

double get_number(const json& object, const std::string& key, const std::string& origin, const std::string& where,
                  double fallback) {
  if (!object.contains(key)) return fallback;
  if (!object[key].is_number()) fail(origin, where + key, "must be a number, got " + object[key].dump());
  return object[key].get<double>();
}

bool get_bool(const json& object, const std::string& key, const std::string& origin, const std::string& where,
              bool fallback) {
  if (!object.contains(key)) return fallback;
  if (!object[key].is_boolean()) fail(origin, where + key, "must be true or false, got " + object[key].dump());
  return object[key].get<bool>();
}

std::string one_of(const std::string& value, const std::set<std::string>& allowed, const std::string& origin,
                   const std::string& field) {
  if (allowed.count(value)) return value;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "'" : ", '") + a + "'";
  fail(origin, field, "must be one of " + list + ", got '" + value + "'");
}

MetricSpec parse_metric(const json& j, const std::string& origin, const std::string& where) {
  if (!j.is_object()) fail(origin, where, "must be an object like {\"path\": \"rougeL\", \"scale\": 100}");
  check_keys(j, {"path", "paths", "combine", "from", "scale", "offset", "decimals", "label", "ratio_to_row",
                 "higher_is_better"},
             origin, where);
  MetricSpec m;
  const std::string w = where + ".";
  if (j.contains("path") == j.contains("paths")) fail(origin, where, "give exactly one of 'path' or 'paths'");
  if (j.contains("path")) {
    m.paths.push_back(get_string(j, "path", origin, w));
  } else {
    if (!j["paths"].is_array() || j["paths"].size() < 2)
      fail(origin, w + "paths", "must be an array of at least two metric paths");
    for (size_t i = 0; i < j["paths"].size(); ++i) {
      m.paths.push_back(text_of(j["paths"][i], origin, w + "paths[" + std::to_string(i) + "]"));
    }
    m.combine = one_of(get_string(j, "combine", origin, w, true), {"geomean", "mean"}, origin, w + "combine");
  }
  for (const auto& p : m.paths)
    if (p.empty() || p.front() == '.' || p.back() == '.' || p.find("..") != std::string::npos)
      fail(origin, where, "metric path '" + p + "' is not a dotted path like 'rouge1.fmeasure'");
  m.from = one_of(get_string(j, "from", origin, w, false, "metrics"), {"metrics", "result"}, origin, w + "from");
  m.scale = get_number(j, "scale", origin, w, 1.0);
  // A zero scale shows every cell as the offset, whatever the results say.
  if (!std::isfinite(m.scale) || m.scale == 0) fail(origin, w + "scale", "must be a finite, non-zero number");
  m.offset = get_number(j, "offset", origin, w, 0.0);
  const double decimals = get_number(j, "decimals", origin, w, 2);
  if (decimals < 0 || decimals > 9 || decimals != static_cast<int>(decimals))
    fail(origin, w + "decimals", "must be an integer from 0 to 9");
  m.decimals = static_cast<int>(decimals);
  m.label = get_string(j, "label", origin, w);
  m.ratio_to_row = get_string(j, "ratio_to_row", origin, w);
  m.higher_is_better = get_bool(j, "higher_is_better", origin, w, true);
  return m;
}

// The options each figure type reads (harness/figure.cpp), besides the common type, title,
// x_label and y_label. An option another type reads would be silently ignored, so it is refused.
// Bars have no log_x: their x positions are category slots, not values.
const std::map<std::string, std::set<std::string>>& figure_type_options() {
  static const std::map<std::string, std::set<std::string>> options = {
      {"lines", {"panels", "show_paper", "log_x", "log_y"}},
      {"bars", {"panels", "show_paper", "log_y"}},
      {"heatmap", {"panels", "reference_row", "palette"}},
      {"stream", {"log_x", "log_y", "curve", "window", "y", "max_points"}}};
  return options;
}

FigureSpec parse_figure(const json& j, const std::string& origin) {
  const std::string where = "figure";
  if (!j.is_object()) fail(origin, where, "must be an object");
  check_keys(j, {"type", "title", "x_label", "y_label", "log_x", "log_y", "show_paper", "reference_row", "panels",
                 "palette", "curve", "window", "y", "max_points"},
             origin, where);
  const std::string w = where + ".";
  FigureSpec f;
  f.type = one_of(get_string(j, "type", origin, w, true), {"lines", "bars", "heatmap", "stream"}, origin, w + "type");
  const std::set<std::string>& own = figure_type_options().at(f.type);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "type" || key == "title" || key == "x_label" || key == "y_label" || own.count(key)) continue;
    std::string list;
    for (const auto& o : own) list += ", " + o;
    fail(origin, w + key, "does not apply to a '" + f.type + "' figure (its options: title, x_label, y_label" + list + ")");
  }
  f.title = get_string(j, "title", origin, w);
  f.x_label = get_string(j, "x_label", origin, w);
  f.y_label = get_string(j, "y_label", origin, w);
  f.log_x = get_bool(j, "log_x", origin, w, false);
  f.log_y = get_bool(j, "log_y", origin, w, false);
  f.show_paper = get_bool(j, "show_paper", origin, w, true);
  f.reference_row = get_string(j, "reference_row", origin, w);
  // Lines and bars split their columns into panels, a heatmap its rows.
  f.panels = one_of(get_string(j, "panels", origin, w, false, "none"),
                    {"none", f.type == "heatmap" ? "row_group" : "column_group"}, origin, w + "panels");
  f.palette = get_string(j, "palette", origin, w, false, "good_high");
  one_of(f.palette, {"good_high", "good_low", "closeness"}, origin, w + "palette");
  f.curve = one_of(get_string(j, "curve", origin, w, false, "moving"), {"moving", "cumulative"}, origin, w + "curve");
  // Bounded before the cast: a double beyond int's range does not convert.
  auto bounded_integer = [&](const char* key, double fallback, double lo, double hi) {
    const double v = get_number(j, key, origin, w, fallback);
    if (!(v >= lo && v <= hi) || v != std::floor(v))
      fail(origin, w + key, "must be an integer in " + format_bound(lo) + ".." + format_bound(hi) + ", got " + j[key].dump());
    return static_cast<int>(v);
  };
  f.window = bounded_integer("window", 64, 1, 1e6);
  f.y = one_of(get_string(j, "y", origin, w, false, "nll"), {"nll", "perplexity"}, origin, w + "y");
  f.max_points = bounded_integer("max_points", 2000, 2, 1e6);
  return f;
}

AxisEntry parse_entry(const json& j, const std::string& origin, const std::string& where, bool is_row) {
  if (!j.is_object()) fail(origin, where, "must be an object with at least a 'label'");
  if (is_row)
    check_keys(j, {"label", "key", "group", "fields", "paper", "curve_file", "note"}, origin, where);
  else
    check_keys(j, {"label", "key", "group", "fields", "metric", "x", "aggregate", "note"}, origin, where);
  const std::string w = where + ".";
  AxisEntry e;
  e.label = get_string(j, "label", origin, w, true);
  if (e.label.empty()) fail(origin, w + "label", "must not be empty");
  e.key = get_string(j, "key", origin, w, false, e.label);
  e.group = get_string(j, "group", origin, w);
  if (j.contains("fields")) e.fields = check_job_fields(j["fields"], origin + ": " + w + "fields");
  if (!is_row) {
    if (j.contains("metric")) e.metric = parse_metric(j["metric"], origin, w + "metric");
    if (j.contains("x")) e.x = get_number(j, "x", origin, w, 0);
    if (j.contains("aggregate")) {
      e.aggregate = one_of(get_string(j, "aggregate", origin, w), {"mean"}, origin, w + "aggregate");
      if (!e.fields.empty()) fail(origin, w + "fields", "an aggregate column runs no job of its own: remove 'fields'");
    }
  } else {
    e.curve_file = get_string(j, "curve_file", origin, w);
  }
  return e;
}

}  // namespace

json check_job_fields(const json& fields, const std::string& where) {
  static const std::map<std::string, std::string> kinds = {
      {"model", "string"},   {"tokenizer", "string"}, {"task", "string"},         {"task_params", "object"},
      {"policy", "string"},  {"policy_params", "object"}, {"budget", "budget"}, {"protocol", "string"},
      {"block", "integer"},  {"seed", "integer"},     {"limit", "integer"},       {"device", "string"},
      {"dtype", "string"},   {"data_root", "string"}};
  if (!fields.is_object()) throw std::invalid_argument(where + ": must be an object of job fields");
  json out = json::object();
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    auto kind = kinds.find(it.key());
    if (kind == kinds.end()) {
      std::string list;
      for (const auto& [k, _] : kinds) list += (list.empty() ? "" : ", ") + k;
      throw std::invalid_argument(where + "." + it.key() + ": unknown job field (expected one of: " + list + ")");
    }
    const json& v = it.value();
    const std::string& k = kind->second;
    if (k == "budget") {
      if (!v.is_string() && !v.is_number_integer())
        throw std::invalid_argument(where + ".budget: must be \"full\", a token count or \"N%\", got " + v.dump());
      try {
        out["budget"] = policies::Budget::parse(v.is_string() ? v.get<std::string>() : std::to_string(v.get<int64_t>()))
                            .to_string();
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(where + ".budget: " + e.what());
      }
      continue;
    }
    const bool ok = (k == "string" && v.is_string()) || (k == "object" && v.is_object()) ||
                    (k == "integer" && v.is_number_integer());
    if (!ok) throw std::invalid_argument(where + "." + it.key() + ": must be " + (k == "integer" ? "an " : "a ") + k +
                                         ", got " + v.dump());
    out[it.key()] = v;
  }
  return out;
}

json command_line_overrides(const std::string& model, const std::vector<std::string>& sets) {
  json out = json::object();
  if (!model.empty()) out["model"] = model;
  for (const auto& set : sets) {
    const size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument("--set " + set + ": expected FIELD=VALUE");
    const std::string field = set.substr(0, eq), text = set.substr(eq + 1);
    json value;
    try {
      value = datasets::parse_json(text, "--set " + field);
    } catch (const datasets::DataError&) {
      value = text;  // a bare word: the string itself
    }
    const size_t dot = field.find('.');
    if (dot == std::string::npos) {
      out[field] = value;
    } else {
      const std::string object = field.substr(0, dot), key = field.substr(dot + 1);
      if (object != "task_params" && object != "policy_params")
        throw std::invalid_argument("--set " + set + ": only task_params.KEY and policy_params.KEY have sub-fields");
      out[object][key] = value;
    }
  }
  return check_job_fields(out, "--set");
}

json merge_fields(json base, const json& over) {
  if (!over.is_object()) return base;
  if (!base.is_object()) base = json::object();
  for (auto it = over.begin(); it != over.end(); ++it) {
    if (it.value().is_object() && base.contains(it.key()) && base[it.key()].is_object())
      base[it.key()] = merge_fields(base[it.key()], it.value());
    else
      base[it.key()] = it.value();
  }
  return base;
}

bool TableSpec::has_paper_numbers() const {
  for (const auto& r : rows)
    for (const auto& v : r.paper)
      if (v) return true;
  return false;
}

namespace {

// Normalises every cell's job as a grid would; `overrides` are --model/--set, if any.
void check_cell_jobs(const TableSpec& spec, const json& overrides) {
  for (size_t r = 0; r < spec.rows.size(); ++r)
    for (size_t c = 0; c < spec.columns.size(); ++c) {
      if (spec.is_aggregate_column(c) || !spec.rows[r].curve_file.empty()) continue;  // no job
      try {
        tasks::normalize_job_spec(cell_job(spec, r, c, overrides));
      } catch (const std::exception& e) {
        const bool overridden = overrides.is_object() && !overrides.empty();
        fail(spec.path, "rows[" + std::to_string(r) + "] x columns[" + std::to_string(c) + "] (" + spec.rows[r].label +
                            " / " + spec.columns[c].label + ")" + (overridden ? " with --model/--set" : ""),
             e.what());
      }
    }
}

}  // namespace

TableSpec parse_table_spec(const json& j, const std::string& origin) {
  if (!j.is_object()) fail(origin, "(top level)", "a table spec must be a JSON object");
  check_keys(j, {"id", "title", "description", "row_header", "paper", "fixed", "metric", "rows", "columns", "seeds", "notes",
                 "figure"},
             origin, "");
  TableSpec s;
  s.path = origin;
  s.id = get_string(j, "id", origin, "", false,
                    std::filesystem::path(origin).stem().string());
  // The id names the output files (<out>/<id>.md, <id>.png) and the grids: "../../x" would write
  // outside the output folder.
  if (!is_plain_name(s.id))
    fail(origin, "id", std::string("a table id must be ") + kPlainNameRule + " (it names the output files), got " +
                           json(s.id).dump());
  s.title = get_string(j, "title", origin, "", true);
  s.description = get_string(j, "description", origin, "");
  s.row_header = get_string(j, "row_header", origin, "", false, "Method");

  if (!j.contains("paper") || !j["paper"].is_object()) fail(origin, "paper", "required object is missing");
  const json& p = j["paper"];
  check_keys(p, {"name", "file", "source", "model", "model_ids", "numbers_note"}, origin, "paper");
  s.paper_name = get_string(p, "name", origin, "paper.", true);
  s.paper_file = get_string(p, "file", origin, "paper.");
  s.paper_source = get_string(p, "source", origin, "paper.", true);
  s.paper_model = get_string(p, "model", origin, "paper.", true);
  s.paper_numbers_note = get_string(p, "numbers_note", origin, "paper.");
  if (p.contains("model_ids")) {
    if (!p["model_ids"].is_array()) fail(origin, "paper.model_ids", "must be an array of strings");
    for (size_t i = 0; i < p["model_ids"].size(); ++i) {
      s.paper_model_ids.push_back(text_of(p["model_ids"][i], origin, "paper.model_ids[" + std::to_string(i) + "]"));
    }
  }

  if (j.contains("fixed")) s.fixed = check_job_fields(j["fixed"], origin + ": fixed");
  if (!j.contains("metric")) fail(origin, "metric", "required object is missing");
  s.metric = parse_metric(j["metric"], origin, "metric");

  for (const char* axis : {"rows", "columns"}) {
    if (!j.contains(axis) || !j[axis].is_array() || j[axis].empty())
      fail(origin, axis, "required non-empty array is missing");
    std::set<std::string> labels;
    for (size_t i = 0; i < j[axis].size(); ++i) {
      const std::string where = std::string(axis) + "[" + std::to_string(i) + "]";
      AxisEntry e = parse_entry(j[axis][i], origin, where, std::string(axis) == "rows");
      if (!labels.insert(e.group + "\x1f" + e.label).second)
        fail(origin, where + ".label", "duplicate label '" + e.label + "'" + (e.group.empty() ? "" : " in group '" + e.group + "'"));
      (std::string(axis) == "rows" ? s.rows : s.columns).push_back(std::move(e));
    }
  }

  // The paper's numbers: one per column (null where the paper has none).
  for (size_t r = 0; r < s.rows.size(); ++r) {
    const json& row = j["rows"][r];
    if (!row.contains("paper")) continue;
    const std::string where = "rows[" + std::to_string(r) + "].paper";
    if (!row["paper"].is_array()) fail(origin, where, "must be an array with one number (or null) per column");
    if (row["paper"].size() != s.columns.size())
      fail(origin, where, "has " + std::to_string(row["paper"].size()) + " entries but the table has " +
                              std::to_string(s.columns.size()) + " columns");
    for (size_t c = 0; c < row["paper"].size(); ++c) {
      const json& v = row["paper"][c];
      if (v.is_null()) {
        s.rows[r].paper.push_back(std::nullopt);
      } else if (v.is_number()) {
        s.rows[r].paper.push_back(v.get<double>());
      } else {
        fail(origin, where + "[" + std::to_string(c) + "]", "must be a number or null, got " + v.dump());
      }
    }
  }

  if (j.contains("seeds")) {
    if (!j["seeds"].is_array()) fail(origin, "seeds", "must be an array of integers");
    // An empty list would read as "any seed" (TableSpec::seeds), the opposite of what it says.
    if (j["seeds"].empty()) fail(origin, "seeds", "must not be empty (leave 'seeds' out to use any seed's results)");
    for (size_t i = 0; i < j["seeds"].size(); ++i) {
      if (!j["seeds"][i].is_number_integer()) fail(origin, "seeds[" + std::to_string(i) + "]", "must be an integer");
      s.seeds.push_back(j["seeds"][i]);
    }
  }
  if (j.contains("notes")) {
    if (!j["notes"].is_array()) fail(origin, "notes", "must be an array of strings");
    for (size_t i = 0; i < j["notes"].size(); ++i) {
      s.notes.push_back(text_of(j["notes"][i], origin, "notes[" + std::to_string(i) + "]"));
    }
  }
  if (j.contains("figure")) s.figure = parse_figure(j["figure"], origin);

  // Every cell that runs a job must name its task, policy and budget (a curve-file row runs
  // none); ratio rows must exist.
  for (size_t r = 0; r < s.rows.size(); ++r)
    for (size_t c = 0; c < s.columns.size(); ++c) {
      if (s.is_aggregate_column(c) || !s.rows[r].curve_file.empty()) continue;
      const json job = cell_job(s, r, c);
      for (const char* key : {"task", "policy", "budget"})
        if (!job.contains(key))
          fail(origin, "rows[" + std::to_string(r) + "] x columns[" + std::to_string(c) + "]",
               std::string("the cell's job has no '") + key + "' (set it in fixed, the row's or the column's fields)");
    }
  check_cell_jobs(s, json::object());
  auto check_row_ref = [&](const std::string& label, const std::string& field) {
    if (label.empty()) return;
    for (const auto& row : s.rows)
      if (row.label == label) return;
    fail(origin, field, "names row '" + label + "', which the table does not have");
  };
  check_row_ref(s.metric.ratio_to_row, "metric.ratio_to_row");
  for (size_t c = 0; c < s.columns.size(); ++c)
    if (s.columns[c].metric) check_row_ref(s.columns[c].metric->ratio_to_row, "columns[" + std::to_string(c) + "].metric.ratio_to_row");
  if (s.figure) check_row_ref(s.figure->reference_row, "figure.reference_row");
  if (s.figure && s.figure->type == "stream")
    for (size_t r = 0; r < s.rows.size(); ++r)
      if (!s.rows[r].curve_file.empty() && s.columns.size() != 1)
        fail(origin, "rows[" + std::to_string(r) + "].curve_file", "a curve file needs a table with a single column");
  return s;
}

void validate_cell_jobs(const TableSpec& spec, const json& overrides) {
  // Without overrides the cells are those load_table_spec checked.
  if (overrides.is_object() && !overrides.empty()) check_cell_jobs(spec, overrides);
}

TableSpec load_table_spec(const std::string& path) {
  json j;
  try {
    j = datasets::read_json_file(path);
  } catch (const datasets::DataError& e) {
    throw std::invalid_argument(e.what());
  }
  return parse_table_spec(j, path);
}

std::vector<TableSpec> load_table_specs(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error(dir + ": not a folder of table specs");
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  std::vector<TableSpec> specs;
  for (const auto& f : files) specs.push_back(load_table_spec(f));
  return specs;
}

json cell_job(const TableSpec& spec, size_t r, size_t c, const json& overrides) {
  json job = merge_fields(spec.fixed, spec.rows.at(r).fields);
  job = merge_fields(job, spec.columns.at(c).fields);
  return merge_fields(job, overrides);
}

const MetricSpec& cell_metric(const TableSpec& spec, size_t c) {
  return spec.columns.at(c).metric ? *spec.columns[c].metric : spec.metric;
}

MetricSpec cell_metric(const TableSpec& spec, size_t r, size_t c) {
  MetricSpec m = cell_metric(spec, c);
  auto replace_all = [](std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
  };
  for (auto& path : m.paths)
    path = replace_all(replace_all(path, "{row}", spec.rows.at(r).key), "{column}", spec.columns.at(c).key);
  return m;
}

}  // namespace kvbench::harness
