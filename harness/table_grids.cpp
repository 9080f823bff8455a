// The grids that run a table's jobs (kvbench table --print-grid / --grid-out): the cells' jobs
// partitioned into as few product grids as their fields allow.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "harness/table_spec.hpp"

namespace kvbench::harness {

using nlohmann::json;

namespace {

// The grid's axes: the policy with its parameters is one value.
json policy_value(const json& job) {
  return {{"name", job.at("policy")}, {"params", job.value("policy_params", json::object())}};
}

json job_fixed_part(json job) {
  for (const char* k : {"task", "policy", "policy_params", "budget", "model", "seed"}) job.erase(k);
  return job;
}

template <typename Key>
std::vector<std::vector<json>> partition(const std::vector<json>& jobs, Key key) {
  std::vector<std::vector<json>> parts;
  std::map<std::string, size_t> index;
  for (const auto& job : jobs) {
    const std::string k = key(job).dump();
    auto it = index.find(k);
    if (it == index.end()) {
      index[k] = parts.size();
      parts.push_back({job});
    } else {
      parts[it->second].push_back(job);
    }
  }
  return parts;
}

// Jobs sharing their fixed part: one grid if they form a full product, else split by policy,
// then by task, until each part is a product (a single job always is).
void add_product_grids(const std::vector<json>& jobs, const json& seeds, json& grids, int depth = 0) {
  std::vector<json> tasks, policies, budgets, models;
  auto add_unique = [](std::vector<json>& values, const json& v) {
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  };
  for (const auto& job : jobs) {
    add_unique(tasks, job.at("task"));
    add_unique(policies, policy_value(job));
    add_unique(budgets, job.at("budget"));
    add_unique(models, job.value("model", json()));
  }
  if (tasks.size() * policies.size() * budgets.size() * models.size() == jobs.size()) {
    json axes = {{"task", tasks}, {"policy", policies}, {"budget", budgets}};
    if (!(models.size() == 1 && models[0].is_null())) axes["model"] = models;
    if (!seeds.empty()) axes["seed"] = seeds;
    grids.push_back({{"axes", axes}, {"fixed", job_fixed_part(jobs.front())}});
    return;
  }
  auto by = depth == 0 ? std::function<json(const json&)>([](const json& j) { return policy_value(j); })
          : depth == 1 ? std::function<json(const json&)>([](const json& j) { return j.at("task"); })
                       : std::function<json(const json&)>([](const json& j) { return j.at("budget"); });
  for (const auto& part : partition(jobs, by)) add_product_grids(part, seeds, grids, depth + 1);
}

}  // namespace

json table_grids(const TableSpec& spec, const json& overrides) {
  std::vector<json> jobs;
  std::set<std::string> seen;
  for (size_t r = 0; r < spec.rows.size(); ++r)
    for (size_t c = 0; c < spec.columns.size(); ++c) {
      if (spec.is_aggregate_column(c) || !spec.rows[r].curve_file.empty()) continue;
      json job = cell_job(spec, r, c, overrides);
      job.erase("seed");
      if (seen.insert(job.dump()).second) jobs.push_back(job);
    }
  json seeds = json::array();
  for (int64_t s : spec.seeds) seeds.push_back(s);
  json grids = json::array();
  for (const auto& group : partition(jobs, [](const json& j) { return job_fixed_part(j); }))
    add_product_grids(group, seeds, grids);
  // Named after the spec (kvbench grid names its Slurm folder after the grid).
  for (size_t i = 0; i < grids.size(); ++i) {
    grids[i]["name"] = grids.size() == 1 ? spec.id : spec.id + "-" + std::to_string(i + 1);
    grids[i]["description"] = spec.title;
  }
  return grids;
}


}  // namespace kvbench::harness
