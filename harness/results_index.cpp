#include "harness/results_index.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "datasets/json_parse.hpp"
#include "harness/result_file.hpp"
#include "policies/budget.hpp"
#include "policies/registry.hpp"

namespace kvbench::harness {
namespace {

using nlohmann::json;

std::string normal_budget(const json& v) {
  try {
    if (v.is_string()) return policies::Budget::parse(v.get<std::string>()).to_string();
    if (v.is_number_integer()) return policies::Budget::parse(std::to_string(v.get<int64_t>())).to_string();
  } catch (const std::invalid_argument&) {
  }
  return v.dump();  // not a budget: compared as written, so it can only match itself
}

// Every key of `want` is in `have` with an equal value (objects compared recursively the same way).
bool subset_equal(const json& want, const json& have) {
  if (!want.is_object()) return want == have;
  if (!have.is_object()) return false;
  for (auto it = want.begin(); it != want.end(); ++it) {
    if (!have.contains(it.key())) return false;
    if (!subset_equal(it.value(), have[it.key()])) return false;
  }
  return true;
}

bool policy_params_match(const std::string& policy, const json& want, const json& have) {
  try {
    return policies::resolved_params(policy, want) == policies::resolved_params(policy, have);
  } catch (const std::exception&) {
    // A policy (or parameter) this build does not know: compare the keys the cell gives.
    return subset_equal(want, have);
  }
}

}  // namespace

std::string ResultRecord::id() const {
  if (json.contains("id") && json["id"].is_string()) return json["id"];
  return std::filesystem::path(file).stem().string();
}

json canonical_spec(const json& result_spec) {
  json spec = result_spec;
  if (!spec.is_object()) return spec;
  if (spec.contains("budget")) spec["budget"] = normal_budget(spec["budget"]);
  if (spec.contains("policy") && spec["policy"].is_string()) {
    try {
      spec["policy_params"] = policies::resolved_params(spec["policy"], spec.value("policy_params", json::object()));
    } catch (const std::exception&) {
    }
  }
  return spec;
}

bool job_matches(const json& cell, const json& spec) {
  if (!spec.is_object()) return false;
  for (auto it = cell.begin(); it != cell.end(); ++it) {
    const std::string& key = it.key();
    if (key == "policy_params") continue;  // below, once the policy is known to be equal
    if (!spec.contains(key)) {
      // A result written before a field existed: only the field's neutral value matches.
      if (key == "task_params" && it.value().empty()) continue;
      return false;
    }
    if (key == "budget") {
      if (normal_budget(it.value()) != normal_budget(spec[key])) return false;
    } else if (key == "task_params") {
      if (!subset_equal(it.value(), spec[key])) return false;
    } else if (it.value() != spec[key]) {
      return false;
    }
  }
  // A cell that names a policy without parameters means the policy's defaults.
  if (cell.contains("policy_params") || cell.contains("policy")) {
    const std::string policy = spec.value("policy", std::string());
    const json want = cell.value("policy_params", json::object());
    if (!policy_params_match(policy, want, spec.value("policy_params", json::object()))) return false;
  }
  return true;
}

ResultsIndex ResultsIndex::load(const std::string& dir) {
  ResultsIndex index;
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) {
    index.warnings_.push_back(dir + ": no results folder (no results yet)");
    return index;
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  std::map<std::string, size_t> by_id;  // job id -> index in records_
  for (const auto& file : files) {
    json j;
    try {
      j = datasets::read_json_file(file);
    } catch (const std::exception& e) {
      index.warnings_.push_back(file + ": skipped, not valid JSON (" + std::string(e.what()) + ")");
      continue;
    }
    const std::string problem = result_json_problem(j, "");
    if (!problem.empty()) {
      index.warnings_.push_back(file + ": skipped, not a result file (" + problem + ")");
      continue;
    }
    // One job counts once, whatever the file is called or wherever it lies: a copy of a result
    // would otherwise double its weight in a mean (n=2 from one run).
    const std::string id = j["id"];
    const std::string job = result_job_key(j);
    auto seen = by_id.find(job);
    if (seen != by_id.end()) {
      const ResultRecord& first = index.records_[seen->second];
      if (first.json["metrics"] != j["metrics"] || canonical_spec(first.json["spec"]) != canonical_spec(j["spec"]))
        throw std::runtime_error(file + ": job " + id + " has a different result in " + first.file +
                                 " (conflicting results of one job; remove the wrong one)");
      index.warnings_.push_back(file + ": skipped, the same result as " + first.file + " (job " + id + ")");
      continue;
    }
    by_id[job] = index.records_.size();
    index.records_.push_back({file, std::move(j)});
  }
  return index;
}

void ResultsIndex::add(ResultRecord record) {
  records_.push_back(std::move(record));
  std::stable_sort(records_.begin(), records_.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
}

std::vector<const ResultRecord*> ResultsIndex::match(const json& cell, const std::vector<int64_t>& seeds) const {
  std::vector<const ResultRecord*> out;
  for (const auto& r : records_) {
    const json& spec = r.json["spec"];
    if (!job_matches(cell, spec)) continue;
    if (!seeds.empty()) {
      const int64_t seed = spec.contains("seed") && spec["seed"].is_number_integer() ? spec["seed"].get<int64_t>() : 0;
      if (std::find(seeds.begin(), seeds.end(), seed) == seeds.end()) continue;
    }
    out.push_back(&r);
  }
  return out;
}

std::optional<double> extract_metric(const MetricSpec& metric, const json& result, std::string* why) {
  const json* root = &result;
  if (metric.from == "metrics") {
    if (!result.contains("metrics") || !result["metrics"].is_object()) {
      if (why) *why = "the result has no 'metrics' object";
      return std::nullopt;
    }
    root = &result["metrics"];
  }
  std::vector<double> values;
  for (const auto& path : metric.paths) {
    const json* node = root;
    std::string walked;
    std::stringstream parts(path);
    std::string part;
    while (std::getline(parts, part, '.')) {
      walked += (walked.empty() ? "" : ".") + part;
      if (!node->is_object() || !node->contains(part)) {
        if (why) {
          std::string have;
          if (node->is_object())
            for (auto it = node->begin(); it != node->end(); ++it) have += (have.empty() ? "" : ", ") + it.key();
          *why = "no '" + walked + "' in " + metric.from + (have.empty() ? "" : " (it has: " + have + ")");
        }
        return std::nullopt;
      }
      node = &(*node)[part];
    }
    if (!node->is_number()) {
      if (why) *why = "'" + path + "' is not a number (" + node->dump().substr(0, 60) + ")";
      return std::nullopt;
    }
    values.push_back(node->get<double>());
  }
  double v = values.front();
  if (metric.combine == "geomean") {
    double log_sum = 0;
    for (double x : values) {
      if (x < 0) {
        if (why) *why = "geometric mean of a negative value";
        return std::nullopt;
      }
      log_sum += x > 0 ? std::log(x) : -INFINITY;
    }
    v = std::exp(log_sum / static_cast<double>(values.size()));
  } else if (metric.combine == "mean") {
    v = 0;
    for (double x : values) v += x;
    v /= static_cast<double>(values.size());
  }
  return v * metric.scale + metric.offset;
}

}  // namespace kvbench::harness
