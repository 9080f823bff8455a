// Table specs that must be refused, each error naming the file and the field; cell jobs checked as
// a grid checks them; the committed specs in results/tables; and the `kvbench table` command line.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "cli/run_binary.hpp"
#include "harness/table_render.hpp"
#include "policies/registry.hpp"
#include "error_text.hpp"
#include "table_fixture.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench {
namespace {

using harness::compute_table;
using harness::ResultsIndex;
using nlohmann::json;
using table_testing::fixture_results_dir;
using table_testing::fixture_spec;

std::string testing_read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

using testing::contains;
using testing::error_of;


TEST(TableSpecErrors, NameTheFileAndTheField) {
  table_testing::TempDir dir;
  auto load = [&](const std::string& text) {
    const std::string file = dir.write("bad.json", text);
    return error_of([&] { harness::load_table_spec(file); });
  };
  const std::string file = (dir.path / "bad.json").string();
  std::string e = load("{\n  \"title\": \"x\",\n  oops\n}");
  EXPECT_TRUE(contains(e, file + ":3: invalid JSON")) << e;

  auto j = json::parse(table_testing::kFixtureSpec);
  j["rows"][1]["paper"] = {1.0, 2.0};
  e = load(j.dump());
  EXPECT_TRUE(contains(e, file + ": rows[1].paper: has 2 entries but the table has 3 columns")) << e;

  j = json::parse(table_testing::kFixtureSpec);
  j["rows"][0]["paper"][2] = "25.0";
  e = load(j.dump());
  EXPECT_TRUE(contains(e, file + ": rows[0].paper[2]: must be a number or null")) << e;

  j = json::parse(table_testing::kFixtureSpec);
  j["colums"] = j["columns"];
  e = load(j.dump());
  EXPECT_TRUE(contains(e, file + ": colums: unknown field")) << e;

  j = json::parse(table_testing::kFixtureSpec);
  j["columns"][0]["fields"]["budget"] = "half";
  e = load(j.dump());
  EXPECT_TRUE(contains(e, file + ": columns[0].fields.budget: budget must be")) << e;

  j = json::parse(table_testing::kFixtureSpec);
  j["fixed"].erase("task");
  e = load(j.dump());
  EXPECT_TRUE(contains(e, file + ": rows[0] x columns[0]: the cell's job has no 'task'")) << e;

  j = json::parse(table_testing::kFixtureSpec);
  j["metric"].erase("path");
  e = load(j.dump());
  EXPECT_TRUE(contains(e, file + ": metric: give exactly one of 'path' or 'paths'")) << e;

  j = json::parse(table_testing::kFixtureSpec);
  j["figure"]["type"] = "pie";
  e = load(j.dump());
  EXPECT_TRUE(contains(e, file + ": figure.type: must be one of")) << e;

  EXPECT_TRUE(contains(error_of([&] { harness::load_table_spec((dir.path / "none.json").string()); }),
                       "none.json: cannot open JSON file"));
}

// The error of loading `spec` written as bad.json in `dir`.
std::string spec_error(const table_testing::TempDir& dir, const json& spec) {
  dir.write("bad.json", spec.dump());
  return error_of([&] { harness::load_table_spec((dir.path / "bad.json").string()); });
}

// Settings that parse but would give silently wrong output: a zero scale, an empty seed list,
// an option the figure type never reads, an id that names a path outside --out.
TEST(TableSpecErrors, SilentlyWrongSettingsAreRefused) {
  table_testing::TempDir dir;
  const std::string file = (dir.path / "bad.json").string();
  auto load = [&](const json& j) { return spec_error(dir, j); };
  json j = json::parse(table_testing::kFixtureSpec);
  j["metric"]["scale"] = 0;
  EXPECT_EQ(load(j), file + ": metric.scale: must be a finite, non-zero number");
  j = json::parse(table_testing::kFixtureSpec);
  j["columns"][0]["metric"] = {{"path", "rouge1"}, {"scale", 0.0}};
  EXPECT_EQ(load(j), file + ": columns[0].metric.scale: must be a finite, non-zero number");

  j = json::parse(table_testing::kFixtureSpec);
  j["seeds"] = json::array();
  EXPECT_EQ(load(j), file + ": seeds: must not be empty (leave 'seeds' out to use any seed's results)");

  j = json::parse(table_testing::kFixtureSpec);
  j["figure"]["window"] = 5;
  EXPECT_EQ(load(j), file + ": figure.window: does not apply to a 'lines' figure (its options: title, x_label, "
                            "y_label, log_x, log_y, panels, show_paper)");
  for (const char* option : {"curve", "max_points", "palette", "log_x", "reference_row"}) {
    j = json::parse(table_testing::kFixtureSpec);
    j["figure"] = {{"type", "bars"}, {option, option == std::string("max_points") ? json(3) : json("moving")}};
    EXPECT_TRUE(contains(load(j), file + ": figure." + option + ": does not apply to a 'bars' figure")) << option;
  }
  j = json::parse(table_testing::kFixtureSpec);
  j["figure"] = {{"type", "heatmap"}, {"log_y", true}};
  EXPECT_TRUE(contains(load(j), file + ": figure.log_y: does not apply to a 'heatmap' figure")) << load(j);
  j["figure"] = {{"type", "stream"}, {"show_paper", false}};
  EXPECT_TRUE(contains(load(j), file + ": figure.show_paper: does not apply to a 'stream' figure")) << load(j);
  j["figure"] = {{"type", "lines"}, {"panels", "row_group"}};
  EXPECT_EQ(load(j), file + ": figure.panels: must be one of 'column_group', 'none', got 'row_group'");
  j["figure"] = {{"type", "heatmap"}, {"panels", "column_group"}};
  EXPECT_EQ(load(j), file + ": figure.panels: must be one of 'none', 'row_group', got 'column_group'");
  j["figure"] = {{"type", "heatmap"}, {"panels", "row_group"}, {"palette", "closeness"}, {"title", "t"}};
  EXPECT_EQ(load(j), "(no error)");

  for (const char* id : {"../../x", "a/b", ".hidden", ""}) {
    j = json::parse(table_testing::kFixtureSpec);
    j["id"] = id;
    EXPECT_EQ(load(j), file + ": id: a table id must be 1-100 letters, digits, '.', '_' or '-', starting with a letter "
                              "or digit (it names the output files), got " + json(id).dump());
  }
}

// Every cell's job is checked as a grid checks it, when the spec is loaded and again with the
// command line's overrides: a typo is an error naming the cell, not "N cells missing".
TEST(TableSpecErrors, CellJobsAreCheckedAsTheGridWould) {
  table_testing::TempDir dir;
  const std::string file = (dir.path / "bad.json").string();
  auto load = [&](const json& j) { return spec_error(dir, j); };
  json j = json::parse(table_testing::kFixtureSpec);
  j["fixed"]["task_params"] = {{"max_tokns", 5}};
  std::string e = load(j);
  EXPECT_TRUE(contains(e, file + ": rows[0] x columns[0] (KVEC / 50%): task_params: field 'max_tokns' is not a "
                              "parameter of task 'xsum'")) << e;
  j = json::parse(table_testing::kFixtureSpec);
  j["rows"][1]["fields"]["policy_params"] = {{"lamda", 0.5}};
  e = load(j);
  EXPECT_TRUE(contains(e, file + ": rows[1] x columns[0] (KVEC-0.5 / 50%): ")) << e;
  j = json::parse(table_testing::kFixtureSpec);
  j["fixed"]["limit"] = -1;
  EXPECT_EQ(load(j), file + ": rows[0] x columns[0] (KVEC / 50%): job spec: field 'limit' must be an integer >= 0 "
                            "(at most 2^63 - 1), got -1");

  const auto spec = table_testing::fixture_spec();
  EXPECT_EQ(error_of([&] { harness::validate_cell_jobs(spec, harness::command_line_overrides("", {"limit=-2"})); }),
            spec.path + ": rows[0] x columns[0] (KVEC / 50%) with --model/--set: job spec: field 'limit' must be an "
                        "integer >= 0 (at most 2^63 - 1), got -2");
  e = error_of([&] { harness::validate_cell_jobs(spec, harness::command_line_overrides("", {"task_params.max_tokns=5"})); });
  EXPECT_TRUE(contains(e, "with --model/--set: task_params: field 'max_tokns' is not a parameter of task 'xsum'")) << e;
  EXPECT_EQ(error_of([&] { harness::validate_cell_jobs(spec, harness::command_line_overrides("m", {"limit=3"})); }),
            "(no error)");

  // The binary stops before reading results; a model override of a committed spec still works.
  const std::string spec_file = dir.write("fixture_xsum.json", table_testing::kFixtureSpec);
  auto r = testing::run_kvbench("table " + spec_file + " --results " + fixture_results_dir() + " --set limit=-2 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "with --model/--set: job spec: field 'limit' must be an integer >= 0")) << r.output;
  r = testing::run_kvbench("table " + table_testing::repo_dir() + "/results/tables/buzz_table3.json --model other "
                           "--print-grid 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "\"other\"")) << r.output;
}

// The committed specs: all parse, name only kvbench's tasks and (registered) policies, and their
// paper numbers are present exactly where the paper printed numbers.
TEST(TableSpecs, CommittedSpecsAreValid) {
  const auto specs = harness::load_table_specs(table_testing::repo_dir() + "/results/tables");
  ASSERT_GE(specs.size(), 20u);
  std::set<std::string> ids;
  for (const auto& spec : specs) {
    EXPECT_TRUE(ids.insert(spec.id).second) << spec.path;
    for (size_t r = 0; r < spec.rows.size(); ++r)
      for (size_t c = 0; c < spec.columns.size(); ++c) {
        if (spec.is_aggregate_column(c)) continue;
        const json job = harness::cell_job(spec, r, c);
        EXPECT_EQ(job.value("model", ""), "stories260K") << spec.path;
        // The policy must be registered, its parameters valid, the task one this build knows.
        const std::string policy = job["policy"];
        bool registered = false;
        for (const auto& info : policies::registered_policies()) registered = registered || info.name == policy;
        EXPECT_TRUE(registered) << spec.path << ": " << job.dump();
        if (registered) {
          EXPECT_NO_THROW(policies::resolved_params(policy, job.value("policy_params", json::object())))
              << spec.path << ": " << job.dump();
        }
        const std::string task = job["task"];
        for (const auto& family : tasks::registered_task_families())
          if (family.name == task || (family.name.back() == '/' && task.rfind(family.name, 0) == 0)) {
            EXPECT_NO_THROW(tasks::make_task(task)) << spec.path << ": " << task;
          }
      }
    if (!spec.has_paper_numbers()) {
      EXPECT_FALSE(spec.paper_numbers_note.empty()) << spec.path << ": say why there are no numbers";
    }
  }
}

TEST(TableCli, RendersCsvAndFailsClearlyOnABadSpec) {
  table_testing::TempDir dir;
  const std::string spec = dir.write("fixture_xsum.json", table_testing::kFixtureSpec);
  auto r = testing::run_kvbench("table " + spec + " --results " + fixture_results_dir() + " --format csv 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, ",KVEC-0.5,,20%,rougeL,19,,1,18.5,0.5,ok\n")) << r.output;

  r = testing::run_kvbench("table " + spec + " --print-grid");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(json::parse(r.output)["axes"]["budget"], json::array({"50%", "20%"}));

  const std::string out = (dir.path / "out").string();
  r = testing::run_kvbench("table " + spec + " --results " + fixture_results_dir() + " --format all --out " + out +
                           " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* ext : {".md", ".csv", ".tex"})
    EXPECT_TRUE(std::filesystem::file_size(out + "/fixture_xsum" + ext) > 100) << ext;
  // Replaced whole, through a unique temporary: a hard link keeps the old bytes, and a stale
  // "<file>.tmp" (the old fixed temporary name) is no obstacle.
  std::filesystem::create_hard_link(out + "/fixture_xsum.md", (dir.path / "kept.md").string());
  std::filesystem::create_directories(out + "/fixture_xsum.md.tmp");
  const std::string before = testing_read(out + "/fixture_xsum.md");
  r = testing::run_kvbench("table " + spec + " --results " + fixture_results_dir() + " --set protocol=oneshot --out " +
                           out + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(testing_read((dir.path / "kept.md").string()), before);
  EXPECT_NE(testing_read(out + "/fixture_xsum.md"), before);

  const std::string bad = dir.write("bad.json", R"({"title": "x"})");
  r = testing::run_kvbench("table " + bad + " 2>&1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "kvbench: error: " + bad + ": paper: required object is missing")) << r.output;
}

}  // namespace
}  // namespace kvbench
