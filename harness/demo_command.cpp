// `kvbench demo`: the main job on the embedded default model. Streams a few TinyStories stories
// token by token through stories260K under every eviction policy that runs with its defaults (not
// the learned presses, which need their artefacts, nor ThinK) at two cache budgets, and prints
// streaming perplexity per policy and budget beside the full cache. Every
// cell is an ordinary job: its result lands in the results directory, and re-running the demo
// reuses it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "harness/command.hpp"
#include "harness/grid_runner.hpp"
#include "harness/grid_spec.hpp"
#include "policies/registry.hpp"

namespace kvbench::harness {
namespace {

struct DemoArgs {
  std::string results = "results/runs";
  int workers = 1;
  bool quick = false;
  bool quiet = false;
};

struct DemoPlan {
  int64_t stories;
  int64_t max_tokens;
  std::vector<std::string> budgets;
};

// Learned presses need their published artefact (qfilter, kvzap, duo_attention) and ThinK keeps
// every token (it prunes key channels): they refuse the demo's defaults with invalid_argument. A
// press that rescores a whole prompt once (KVzip) cannot stream, as the demo does.
bool runs_with_defaults(const std::string& policy) {
  try {
    auto p = policies::make_policy(policy);
    if (p->rescoring()) return false;
    policies::SequenceInfo info;
    info.n_layers = 1;
    info.n_heads = info.n_kv_heads = 1;
    info.head_dim = 8;
    info.prompt_len = 64;
    info.budget = 32;
    p->begin(info);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

nlohmann::json demo_grid(const DemoPlan& plan) {
  nlohmann::json fixed = {{"model", "stories260K"},
                          {"task", "tinystories"},
                          {"task_params", {{"mode", "stream"}, {"max_tokens", plan.max_tokens}, {"curve", false}}},
                          {"protocol", "stream"},
                          {"block", 1},
                          {"limit", plan.stories}};
  nlohmann::json evicting = nlohmann::json::array();
  // Every policy by its bare name that runs with its defaults under a token budget; kvpress's
  // variants (`kvpress:<key>`, defined for one compression after the prefill, not for a stream)
  // have their own page, docs/policies-kvpress.md.
  for (const auto& p : policies::registered_policies())
    if (p.name != "full" && p.name.rfind("kvpress:", 0) != 0 && runs_with_defaults(p.name)) evicting.push_back(p.name);
  nlohmann::json grid = {{"name", "demo"}, {"fixed", fixed},
                         {"include", {{{"policy", "full"}, {"budget", "full"}}}}};
  if (!evicting.empty()) grid["axes"] = {{"policy", evicting}, {"budget", plan.budgets}};
  return grid;
}

std::string cell_text(const nlohmann::json& metrics) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f (kv %lld)", metrics.value("perplexity", NAN),
                static_cast<long long>(metrics.value("max_cache_len", int64_t{0})));
  return buffer;
}

int run_demo(const DemoArgs& args) {
  const DemoPlan plan = args.quick ? DemoPlan{2, 160, {"32"}} : DemoPlan{4, 400, {"64", "128"}};
  Grid grid = make_grid(demo_grid(plan), "demo grid");
  std::cout << "kvbench demo: streaming perplexity of stories260K on " << plan.stories
            << " TinyStories validation stories joined into one stream (first " << plan.max_tokens
            << " tokens), fed token by token; each policy evicts after every token. kv: the most tokens a "
               "KV head held, the budget (tokens per KV head) except for PyramidKV and Ada-KV (per-layer and "
               "per-head budgets that average to it) and Cascade (4 sinks on top).\n"
            << grid.cells.size() << " jobs, results in " << args.results << "/\n\n"
            << std::flush;

  ResultsStore store(args.results);
  std::vector<Job> jobs;
  for (const auto& cell : grid.cells) jobs.push_back(cell.job);
  PoolOptions pool;
  pool.workers = args.workers;
  GridRunSummary summary = run_grid_jobs(jobs, store, pool, args.quiet);

  // Rows: policies; columns: the full cache, then each budget.
  std::vector<std::string> columns = {"full"};
  for (const auto& b : plan.budgets) columns.push_back(b);
  std::vector<std::string> rows;
  std::map<std::pair<std::string, std::string>, std::string> cells;
  for (const auto& cell : grid.cells) {
    const std::string policy = cell.job.spec["policy"], budget = cell.job.spec["budget"];
    if (std::find(rows.begin(), rows.end(), policy) == rows.end()) rows.push_back(policy);
    if (store.has_result(cell.job.id))
      cells[{policy, budget}] = cell_text(store.read_result(cell.job.id)["metrics"]);
    else
      cells[{policy, budget}] = summary.failed.count(cell.job.id) ? "FAILED" : "missing";
  }
  std::stable_partition(rows.begin(), rows.end(), [](const std::string& r) { return r == "full"; });
  const int width = 22;
  size_t names = std::string("policy").size();  // the first column fits the longest name
  for (const auto& r : rows) names = std::max(names, r.size());
  const int first = static_cast<int>(names) + 2;
  std::ostringstream table;
  table << std::left << std::setw(first) << "policy";
  for (const auto& c : columns) table << std::setw(width) << (c == "full" ? "full cache" : "budget " + c);
  table << "\n" << std::string(first + width * columns.size(), '-') << "\n";
  for (const auto& r : rows) {
    table << std::setw(first) << r;
    for (const auto& c : columns) {
      auto it = cells.find({r, c});
      table << std::setw(width) << (it == cells.end() ? "-" : it->second);
    }
    table << "\n";
  }
  std::cout << "\nperplexity (lower is better; kv = most tokens held per KV head)\n" << table.str();
  std::cout << "\nOne cell again, by hand:  kvbench run --task tinystories --task-params '"
            << grid.cells.front().job.spec["task_params"].dump() << "' --protocol stream --limit " << plan.stories
            << " --policy full\n";
  for (const auto& [id, error] : summary.failed) std::cout << "FAILED " << id << ": " << error << "\n";
  return summary.complete() ? 0 : 1;
}

const CommandRegistration demo_registration(
    "demo", "The main job on stories260K: streaming perplexity under every policy at two budgets", [](CLI::App& app) {
      auto args = std::make_shared<DemoArgs>();
      app.add_option("--results", args->results, "results directory")->capture_default_str();
      app.add_option("--workers", args->workers, "local worker processes")->capture_default_str()->check(CLI::Range(1, 64));
      app.add_flag("--quick", args->quick, "2 stories, 160 tokens, one budget (a smoke test)");
      app.add_flag("--quiet", args->quiet, "no progress on stderr");
      return [args] { return run_demo(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
