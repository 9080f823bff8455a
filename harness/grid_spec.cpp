#include "harness/grid_spec.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "datasets/json_parse.hpp"
#include "harness/atomic_file.hpp"
#include "harness/grid_limits.hpp"
#include "harness/plain_name.hpp"

namespace kvbench::harness {
namespace {

std::invalid_argument grid_error(const std::string& where, const std::string& message) {
  return std::invalid_argument(where + ": " + message);
}

// Sets the axis value `value` of field `field` on `cell`.
void apply_axis_value(nlohmann::json& cell, const std::string& field, const nlohmann::json& value,
                      const std::string& where) {
  if (field != "policy") {
    cell[field] = value;
    return;
  }
  if (value.is_string()) {
    cell["policy"] = value;
    return;
  }
  if (!value.is_object() || !value.contains("name") || !value["name"].is_string())
    throw grid_error(where, "field 'policy': each value must be a name or {\"name\", \"params\"}, got " + value.dump());
  for (auto it = value.begin(); it != value.end(); ++it)
    if (it.key() != "name" && it.key() != "params")
      throw grid_error(where, "field 'policy': unknown key '" + it.key() + "' in " + value.dump());
  cell["policy"] = value["name"];
  if (value.contains("params")) {
    if (!value["params"].is_object())
      throw grid_error(where, "field 'policy': params must be an object in " + value.dump());
    cell["policy_params"] = value["params"];
  }
}

// The grid name becomes a directory (results/slurm/<name>) and a Slurm job name: one plain path
// component, so "../../x" cannot write elsewhere.
void check_grid_name(const std::string& name, const std::string& where) {
  if (!is_plain_name(name))
    throw grid_error(where, std::string("field 'name': a grid name must be ") + kPlainNameRule +
                                " (it names a directory), got " + nlohmann::json(name).dump());
}

std::vector<std::string> axis_order(const nlohmann::json& axes) {
  std::vector<std::string> order;
  for (const char* first : {"model", "task", "policy", "budget", "seed"})
    if (axes.contains(first)) order.push_back(first);
  for (auto it = axes.begin(); it != axes.end(); ++it)
    if (std::find(order.begin(), order.end(), it.key()) == order.end()) order.push_back(it.key());
  return order;
}

}  // namespace

int64_t max_grid_jobs() {
  const char* env = std::getenv("KVBENCH_MAX_GRID_JOBS");
  if (env && *env) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (*end != '\0' || v < 1) throw std::invalid_argument(std::string("KVBENCH_MAX_GRID_JOBS must be a positive integer, got '") + env + "'");
    return v;
  }
  return kDefaultMaxGridJobs;
}

std::vector<nlohmann::json> expand_grid_cells(const nlohmann::json& grid, const std::string& where) {
  if (!grid.is_object()) throw grid_error(where, "a grid must be a JSON object (a file may hold a list of them)");
  static const std::set<std::string> known = {"name", "description", "fixed", "axes", "include"};
  for (auto it = grid.begin(); it != grid.end(); ++it)
    if (!known.count(it.key()))
      throw grid_error(where, "field '" + it.key() + "' is not a grid field (name, description, fixed, axes, include)");
  const nlohmann::json fixed = grid.value("fixed", nlohmann::json::object());
  const nlohmann::json axes = grid.value("axes", nlohmann::json::object());
  const nlohmann::json include = grid.value("include", nlohmann::json::array());
  if (!fixed.is_object()) throw grid_error(where, "field 'fixed' must be an object");
  if (!axes.is_object()) throw grid_error(where, "field 'axes' must be an object of lists");
  if (!include.is_array()) throw grid_error(where, "field 'include' must be a list of job specs");
  if (axes.empty() && include.empty()) throw grid_error(where, "the grid has no jobs: give 'axes' or 'include'");
  if (grid.contains("name")) {
    if (!grid["name"].is_string()) throw grid_error(where, "field 'name' must be a string");
    check_grid_name(grid["name"], where);
  }
  if (grid.contains("description") && !grid["description"].is_string())
    throw grid_error(where, "field 'description' must be a string");
  if (static_cast<int64_t>(include.size()) > max_grid_jobs())
    throw grid_error(where, "field 'include' lists more than " + std::to_string(max_grid_jobs()) +
                                " jobs (the limit; set KVBENCH_MAX_GRID_JOBS to allow more)");

  std::vector<nlohmann::json> cells;
  if (!axes.empty()) {
    const std::vector<std::string> order = axis_order(axes);
    for (const auto& field : order) {
      if (!axes[field].is_array() || axes[field].empty())
        throw grid_error(where, "field '" + field + "': an axis must be a non-empty list");
      if (fixed.contains(field) || (field == "policy" && fixed.contains("policy_params")))
        throw grid_error(where, "field '" + field + "' is both fixed and an axis");
    }
    // Counted before anything is built: a product of a few long axes can be billions of cells.
    const int64_t limit = max_grid_jobs();
    int64_t count = 1;
    for (const auto& field : order) {
      count *= static_cast<int64_t>(axes[field].size());
      if (count + static_cast<int64_t>(include.size()) > limit)
        throw grid_error(where, "the axes multiply to more than " + std::to_string(limit) +
                                    " jobs (the limit; set KVBENCH_MAX_GRID_JOBS to allow more)");
    }
    cells.push_back(fixed);
    for (const auto& field : order) {
      std::vector<nlohmann::json> next;
      for (const auto& partial : cells)
        for (const auto& value : axes[field]) {
          nlohmann::json cell = partial;
          apply_axis_value(cell, field, value, where);
          next.push_back(std::move(cell));
        }
      cells.swap(next);
    }
  }
  for (const auto& entry : include) {
    if (!entry.is_object()) throw grid_error(where, "field 'include': each entry must be a job spec object");
    nlohmann::json cell = fixed;
    for (auto it = entry.begin(); it != entry.end(); ++it) cell[it.key()] = it.value();
    cells.push_back(std::move(cell));
  }
  return cells;
}

namespace {

// One grid object: its cells expanded and normalised, equal jobs once.
Grid make_single_grid(const nlohmann::json& spec, const std::string& where) {
  Grid grid;
  const std::vector<nlohmann::json> cells = expand_grid_cells(spec, where);  // validates name/description
  grid.name = spec.value("name", "");
  grid.description = spec.value("description", "");
  std::set<std::string> seen;
  for (const auto& raw : cells) {
    Job job;
    try {
      job = make_job(raw);
    } catch (const std::invalid_argument& e) {
      throw grid_error(where, std::string(e.what()) + " (in the cell " + raw.dump() + ")");
    }
    if (seen.insert(job.id).second) grid.cells.push_back({raw, std::move(job)});
  }
  return grid;
}

// A list of grids (what `kvbench table --print-grid` prints when a table's cells differ in their
// fixed fields) runs as one grid: every grid's jobs in order, a job shared by two grids once.
// The list's name is left empty (a file's name stands in); `make_part(grid, where, index)`.
template <class MakePart>
Grid make_grid_list(const nlohmann::json& list, const std::string& where, MakePart make_part) {
  if (list.empty()) throw grid_error(where, "the list of grids is empty");
  Grid all;
  std::set<std::string> seen;
  std::string names;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string part_where = where + ": grid " + std::to_string(i + 1) + " of " + std::to_string(list.size());
    Grid part = make_part(list[i], part_where, i);
    names += (names.empty() ? "" : ", ") + (part.name.empty() ? "#" + std::to_string(i + 1) : part.name);
    for (auto& cell : part.cells)
      if (seen.insert(cell.job.id).second) all.cells.push_back(std::move(cell));
  }
  if (static_cast<int64_t>(all.cells.size()) > max_grid_jobs())
    throw grid_error(where, "the grids hold more than " + std::to_string(max_grid_jobs()) +
                                " jobs together (the limit; set KVBENCH_MAX_GRID_JOBS to allow more)");
  all.description = std::to_string(list.size()) + " grids: " + names;
  return all;
}

}  // namespace

Grid make_grid(const nlohmann::json& spec, const std::string& where) {
  if (spec.is_array())
    return make_grid_list(spec, where, [&](const nlohmann::json& part, const std::string& part_where, size_t) {
      return make_single_grid(part, part_where);
    });
  return make_single_grid(spec, where);
}

Grid load_grid(const std::string& path) {
  const nlohmann::json spec = read_json_file(path);
  const std::string text = read_file(path);
  auto located = [&](const nlohmann::json& part, const std::string& part_where, size_t from) {
    try {
      return make_single_grid(part, part_where);
    } catch (const std::invalid_argument& e) {
      rethrow_with_location(e, path, text, from);  // the field's line within its own grid
    }
  };
  Grid grid;
  if (spec.is_array()) {
    const std::vector<size_t> offsets = datasets::json_array_element_offsets(text);
    grid = make_grid_list(spec, path, [&](const nlohmann::json& part, const std::string& part_where, size_t index) {
      return located(part, part_where, index < offsets.size() ? offsets[index] : 0);
    });
  } else {
    grid = located(spec, path, 0);
  }
  if (grid.name.empty()) {
    grid.name = std::filesystem::path(path).stem().string();
    try {
      check_grid_name(grid.name, path);
    } catch (const std::invalid_argument& e) {
      rethrow_with_location(e, path, text);
    }
  }
  return grid;
}

}  // namespace kvbench::harness
