// `kvbench collect DIR`: gathers result files into one summary (JSON lines or CSV: the spec
// fields and the metrics of each job) and reports the jobs whose result is missing.
// DIR is a Slurm array directory (its manifest.json lists the expected jobs), a grid spec file
// (its jobs are expected), or a results directory (every result in it; nothing is "missing").
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "datasets/json_parse.hpp"
#include "harness/atomic_file.hpp"
#include "harness/command.hpp"
#include "harness/grid_spec.hpp"
#include "harness/result_file.hpp"
#include "harness/results_store.hpp"

namespace kvbench::harness {
namespace {
namespace fs = std::filesystem;

struct CollectArgs {
  std::string source;
  std::string results;  // "" = the manifest's, or results/runs
  std::string format = "jsonl";
  std::string output;   // "" = stdout
};

struct Expected {
  std::string id;
  std::string description;
  int64_t index = -1;  // Slurm array index
};

// The spec fields that go into a summary row, in this order; others are appended by name.
const std::vector<std::string>& spec_columns() {
  static const std::vector<std::string> columns = {"task",  "model", "policy", "policy_params", "budget",
                                                   "protocol", "block", "seed", "limit", "task_params",
                                                   "device", "dtype"};
  return columns;
}

nlohmann::json summary_row(const nlohmann::json& result) {
  nlohmann::json row = {{"id", result.at("id")}};
  const nlohmann::json& spec = result.at("spec");
  for (const auto& column : spec_columns())
    if (spec.contains(column)) row[column] = spec[column];
  nlohmann::json metrics = nlohmann::json::object();
  for (auto it = result.at("metrics").begin(); it != result.at("metrics").end(); ++it)
    if (it->is_primitive()) metrics[it.key()] = it.value();
  row["metrics"] = metrics;
  row["finished_at"] = result.value("finished_at", "");
  return row;
}

std::string csv_field(const nlohmann::json& value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.is_null() ? "" : value.dump();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string to_csv(const std::vector<nlohmann::json>& rows) {
  std::set<std::string> metric_names;
  for (const auto& row : rows)
    for (auto it = row["metrics"].begin(); it != row["metrics"].end(); ++it) metric_names.insert(it.key());
  std::vector<std::string> header = {"id"};
  for (const auto& c : spec_columns()) header.push_back(c);
  std::string out;
  for (size_t i = 0; i < header.size(); ++i) out += (i ? "," : "") + header[i];
  for (const auto& m : metric_names) out += "," + csv_field(m);
  out += ",finished_at\n";
  for (const auto& row : rows) {
    for (size_t i = 0; i < header.size(); ++i) out += (i ? "," : "") + csv_field(row.value(header[i], nlohmann::json()));
    for (const auto& m : metric_names) out += "," + csv_field(row["metrics"].value(m, nlohmann::json()));
    out += "," + csv_field(row["finished_at"]) + "\n";
  }
  return out;
}

// The jobs a Slurm manifest lists; a malformed manifest is an error naming the file and entry.
std::vector<Expected> manifest_jobs(nlohmann::json& manifest, const std::string& path) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument(path + ": " + what + " (not a kvbench Slurm manifest)"); };
  if (!manifest.is_object()) fail("expected a JSON object");
  if (!manifest.contains("results")) manifest["results"] = "results/runs";
  if (!manifest["results"].is_string()) fail("field 'results' must be a string");
  if (!manifest.contains("jobs") || !manifest["jobs"].is_array()) fail("field 'jobs' must be a list");
  std::vector<Expected> out;
  for (size_t i = 0; i < manifest["jobs"].size(); ++i) {
    const nlohmann::json& job = manifest["jobs"][i];
    const std::string where = "jobs[" + std::to_string(i) + "]";
    if (!job.is_object()) fail(where + " must be an object");
    if (!job.contains("id") || !job["id"].is_string()) fail(where + ": field 'id' (a string) is missing");
    if (job.contains("description") && !job["description"].is_string()) fail(where + ": field 'description' must be a string");
    if (job.contains("index") && !job["index"].is_number_integer()) fail(where + ": field 'index' must be an integer");
    out.push_back({job["id"], job.value("description", ""), job.value("index", int64_t{-1})});
  }
  return out;
}

// The last non-empty line of a Slurm task's log, for the missing-job report.
std::string last_log_line(const fs::path& logs, int64_t index) {
  std::error_code ec;
  const std::string suffix = "_" + std::to_string(index) + ".out";
  std::string last;
  for (const auto& entry : fs::directory_iterator(logs, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::istringstream lines(read_file(entry.path().string()));
    std::string line;
    while (std::getline(lines, line))
      if (!line.empty()) last = line;
  }
  return last;
}

int run_collect(CollectArgs args) {
  if (args.format != "jsonl" && args.format != "csv")
    throw std::invalid_argument("--format must be jsonl or csv, got '" + args.format + "'");
  std::vector<Expected> expected;
  fs::path logs;
  bool listed = true;
  std::vector<std::string> result_files;  // directory mode: every *.json in it
  if (fs::is_directory(args.source) && fs::exists(fs::path(args.source) / "manifest.json")) {
    const std::string manifest_path = (fs::path(args.source) / "manifest.json").string();
    nlohmann::json manifest = read_json_file(manifest_path);
    expected = manifest_jobs(manifest, manifest_path);
    if (args.results.empty()) args.results = manifest["results"].get<std::string>();
    logs = fs::path(args.source) / "logs";
  } else if (fs::is_regular_file(args.source)) {
    Grid grid = load_grid(args.source);
    for (const auto& cell : grid.cells) expected.push_back({cell.job.id, short_description(cell.job.spec)});
  } else if (fs::is_directory(args.source)) {
    if (args.results.empty()) args.results = args.source;
    listed = false;
    for (const auto& entry : fs::directory_iterator(args.source))
      if (entry.path().extension() == ".json" && entry.path().filename().string()[0] != '.')
        result_files.push_back(entry.path().string());
    std::sort(result_files.begin(), result_files.end());
    // "0 results" with exit 0 reads as success: a wrong or empty directory is an error.
    if (result_files.empty())
      throw std::invalid_argument(args.source + ": the directory holds no result files (*.json): nothing to collect");
  } else {
    throw std::invalid_argument(args.source + ": not a Slurm array directory, a grid spec or a results directory");
  }
  if (args.results.empty()) args.results = "results/runs";
  ResultsStore store(args.results);

  std::vector<nlohmann::json> rows;
  std::vector<const Expected*> missing;
  std::vector<std::string> invalid;  // "<file>: <why>": reported, never dropped silently
  for (const auto& job : expected) {
    const std::string problem = result_file_problem(store.result_path(job.id), job.id);
    if (problem == "no result file") {
      missing.push_back(&job);
    } else if (!problem.empty()) {
      invalid.push_back(store.result_path(job.id) + ": " + problem);
      missing.push_back(&job);
    } else {
      rows.push_back(summary_row(store.read_result(job.id)));
    }
  }
  // A results directory: one row per job id, whatever the files are called.
  std::map<std::string, std::pair<std::string, nlohmann::json>> by_id;  // job -> (file, metrics)
  for (const auto& file : result_files) {
    nlohmann::json result;
    std::string problem;
    try {
      result = datasets::read_json_file(file);
      problem = result_json_problem(result, "");
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) {
      invalid.push_back(problem.rfind(file, 0) == 0 ? problem : file + ": " + problem);
      continue;
    }
    const std::string id = result["id"], job = result_job_key(result);
    auto seen = by_id.find(job);
    if (seen != by_id.end()) {
      if (seen->second.second != result["metrics"])
        throw std::runtime_error(file + ": job " + id + " has a different result in " + seen->second.first +
                                 " (conflicting results of one job; remove the wrong one)");
      std::cerr << "collect: " << file << ": the same result as " << seen->second.first << " (job " << id
                << "), counted once\n";
      continue;
    }
    by_id[job] = {file, result["metrics"]};
    rows.push_back(summary_row(result));
  }
  std::string text;
  if (args.format == "csv") {
    text = to_csv(rows);
  } else {
    for (const auto& row : rows) text += row.dump() + "\n";
  }
  if (args.output.empty())
    std::cout << text;
  else
    write_file_atomically(args.output, text);
  std::cerr << "collect: " << rows.size() << " results";
  if (listed) std::cerr << " of " << expected.size() << " jobs, " << missing.size() << " missing";
  if (!invalid.empty()) std::cerr << ", " << invalid.size() << " invalid";
  std::cerr << (args.output.empty() ? "" : " -> " + args.output) << "\n";
  for (const auto& line : invalid) std::cerr << "  invalid " << line << "\n";
  for (const Expected* job : missing) {
    std::cerr << "  missing " << job->id;
    if (job->index >= 0) std::cerr << " (array task " << job->index << ")";
    if (!job->description.empty()) std::cerr << "  " << job->description;
    if (job->index >= 0 && !logs.empty()) {
      const std::string last = last_log_line(logs, job->index);
      if (!last.empty()) std::cerr << "\n      log: " << last;
    }
    std::cerr << "\n";
  }
  return missing.empty() && invalid.empty() ? 0 : 1;
}

const CommandRegistration collect_registration(
    "collect", "Gather the results of a Slurm array, a grid or a results directory into a JSONL/CSV summary",
    [](CLI::App& app) {
      auto args = std::make_shared<CollectArgs>();
      app.add_option("source", args->source, "Slurm array directory, grid spec file, or results directory")->required();
      app.add_option("--results", args->results, "results directory (default: the manifest's, else results/runs)");
      app.add_option("--format", args->format, "jsonl or csv")->capture_default_str();
      app.add_option("--output,-o", args->output, "write the summary here (default: stdout)");
      return [args] { return run_collect(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
