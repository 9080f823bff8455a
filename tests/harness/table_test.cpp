// Table specs, result matching and the Markdown/CSV/LaTeX renderings.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "cli/run_binary.hpp"
#include "harness/table_render.hpp"
#include "policies/registry.hpp"
#include "table_fixture.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench {
namespace {

using harness::compute_table;
using harness::ResultsIndex;
using nlohmann::json;
using table_testing::fixture_results_dir;
using table_testing::fixture_spec;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string testing_read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TableSpec, FixtureParses) {
  const auto spec = fixture_spec();
  EXPECT_EQ(spec.id, "fixture_xsum");
  ASSERT_EQ(spec.rows.size(), 2u);
  ASSERT_EQ(spec.columns.size(), 3u);
  EXPECT_EQ(*spec.rows[1].paper[1], 18.5);
  EXPECT_FALSE(spec.rows[1].paper[0].has_value());
  EXPECT_EQ(harness::cell_job(spec, 1, 0),
            json::parse(R"({"task":"xsum","protocol":"stream","model":"stories260K","policy":"kvec",
                            "policy_params":{"lambda":0.5},"budget":"50%"})"));
}

TEST(TableMatch, PicksTheRightResultsAmongDistractors) {
  const auto spec = fixture_spec();
  const auto results = ResultsIndex::load(fixture_results_dir());
  // Row KVEC at 50%: the two seeds, not the lambda=2 run, the CNN/DM run or the 30% run.
  auto matched = results.match(harness::cell_job(spec, 0, 0), spec.seeds);
  std::set<std::string> ids;
  for (const auto* r : matched) ids.insert(r->id());
  EXPECT_EQ(ids, (std::set<std::string>{"kvec-50pct-seed0", "kvec-50pct-seed1"}));
  // Row KVEC-0.5 at 20%: only the lambda=0.5 run (the default-lambda 20% run is a distractor).
  matched = results.match(harness::cell_job(spec, 1, 1), spec.seeds);
  ASSERT_EQ(matched.size(), 1u);
  EXPECT_EQ(matched[0]->id(), "kvec-lambda05-20pct");
  // Row KVEC at 20%: the default run, not the lambda=0.5 one.
  matched = results.match(harness::cell_job(spec, 0, 1), spec.seeds);
  ASSERT_EQ(matched.size(), 1u);
  EXPECT_EQ(matched[0]->id(), "kvec-20pct-seed0");
}

TEST(TableMatch, BudgetsAreComparedNormalisedAndSeedsFiltered) {
  const auto results = ResultsIndex::load(fixture_results_dir());
  json cell = {{"task", "xsum"}, {"policy", "kvec"}, {"budget", "050%"}};
  EXPECT_EQ(results.match(cell, {}).size(), 2u);
  EXPECT_EQ(results.match(cell, {1}).size(), 1u);
  EXPECT_EQ(results.match(cell, {7}).size(), 0u);
  cell["task_params"] = {{"mode", "stream"}};  // the cell asks for a task parameter the results lack
  EXPECT_EQ(results.match(cell, {}).size(), 0u);
}

TEST(TableCompute, MeanStdAggregateAndMissing) {
  const auto spec = fixture_spec();
  const auto table = compute_table(spec, ResultsIndex::load(fixture_results_dir()));
  const auto& kvec50 = table.cells[0][0];
  ASSERT_EQ(kvec50.n(), 2u);
  EXPECT_NEAR(*kvec50.ours, 32.0, 1e-9);
  EXPECT_NEAR(kvec50.std, std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(*kvec50.diff, 2.0, 1e-9);
  EXPECT_NEAR(*table.cells[0][2].ours, 26.5, 1e-9);  // Avg. of 32 and 21
  EXPECT_FALSE(table.cells[1][0].ours.has_value());
  EXPECT_FALSE(table.cells[1][2].ours.has_value());  // an incomplete row has no average
  EXPECT_EQ(table.missing_cells, 1u);
  EXPECT_EQ(table.job_cells, 4u);
  EXPECT_EQ(table.missing_jobs, 1u);
  EXPECT_EQ(table.total_jobs, 4u);
  EXPECT_FALSE(table.same_model_as_paper);
}

TEST(TableRender, MarkdownCellsBesideThePaper) {
  const auto spec = fixture_spec();
  const auto md = harness::render_markdown(compute_table(spec, ResultsIndex::load(fixture_results_dir())));
  EXPECT_TRUE(contains(md, "| Method | 50% ours | 50% paper | 50% Δ | 20% ours | 20% paper | 20% Δ | Avg. ours | "
                           "Avg. paper | Avg. Δ |"))
      << md;
  EXPECT_TRUE(contains(md, "| KVEC | 32.0 ± 1.4 (n=2) | 30.0 | +2.0 | 21.0 | 20.0 | +1.0 | 26.5 | 25.0 | +1.5 |")) << md;
  EXPECT_TRUE(contains(md, "| KVEC-0.5 | — | — | — | 19.0 | 18.5 | +0.5 | — | — | — |")) << md;
  EXPECT_TRUE(contains(md, "Missing: 1 of 4 cells (1 of 4 jobs have no result)")) << md;
  EXPECT_TRUE(contains(md, "the comparison is qualitative")) << md;
  EXPECT_TRUE(contains(md, "stories260K vs Llama-3.1-8B-Instruct")) << md;
}

TEST(TableRender, CsvCells) {
  const auto spec = fixture_spec();
  const auto csv = harness::render_csv(compute_table(spec, ResultsIndex::load(fixture_results_dir())));
  EXPECT_TRUE(contains(csv, "row_group,row,column_group,column,metric,ours,ours_std,n,paper,diff,status\n")) << csv;
  EXPECT_TRUE(contains(csv, ",KVEC,,50%,rougeL,32,1.414213562,2,30,2,ok\n")) << csv;
  EXPECT_TRUE(contains(csv, ",KVEC,,20%,rougeL,21,,1,20,1,ok\n")) << csv;
  EXPECT_TRUE(contains(csv, ",KVEC,,Avg.,mean,26.5,,0,25,1.5,ok\n")) << csv;
  EXPECT_TRUE(contains(csv, ",KVEC-0.5,,50%,rougeL,,,0,,,missing\n")) << csv;
  EXPECT_TRUE(contains(csv, ",KVEC-0.5,,20%,rougeL,19,,1,18.5,0.5,ok\n")) << csv;
}

TEST(TableRender, LatexCells) {
  const auto spec = fixture_spec();
  const auto tex = harness::render_latex(compute_table(spec, ResultsIndex::load(fixture_results_dir())));
  EXPECT_TRUE(contains(tex, "KVEC & 32.0 $\\pm$ 1.4 (n=2) & 30.0 & +2.0 & 21.0 & 20.0 & +1.0 & 26.5 & 25.0 & +1.5 \\\\"))
      << tex;
  EXPECT_TRUE(contains(tex, "KVEC-0.5 & --- & --- & --- & 19.0 & 18.5 & +0.5 & --- & --- & --- \\\\")) << tex;
  EXPECT_TRUE(contains(tex, " & \\multicolumn{3}{c}{50\\%}")) << tex;
  EXPECT_TRUE(contains(tex, "Method & Ours & Paper & $\\Delta$")) << tex;
  EXPECT_TRUE(contains(tex, "\\begin{tabular}{lrrrrrrrrr}")) << tex;
}

TEST(TableRender, SameModelNeedsNoCaveat) {
  auto j = json::parse(table_testing::kFixtureSpec);
  j["paper"]["model_ids"] = {"stories260K"};
  const auto spec = harness::parse_table_spec(j, "same.json");
  const auto table = compute_table(spec, ResultsIndex::load(fixture_results_dir()));
  EXPECT_TRUE(table.same_model_as_paper);
  EXPECT_FALSE(contains(harness::render_markdown(table), "qualitative"));
}

TEST(TableCompute, ResultsOfDifferentConfigurationsInOneCellAreFlagged) {
  const auto spec = fixture_spec();
  auto results = ResultsIndex::load(fixture_results_dir());
  harness::ResultRecord stale = results.records().front();  // distractor-budget30 -> turned into a 20% run
  stale.file = "zz-stale.json";
  stale.json["id"] = "zz-stale";
  stale.json["spec"]["budget"] = "20%";
  stale.json["spec"]["limit"] = 10;
  results.add(stale);
  const auto table = compute_table(spec, results);
  const auto& cell = table.cells[0][1];
  EXPECT_TRUE(cell.ambiguous);
  EXPECT_EQ(cell.ambiguity, "limit");
  EXPECT_EQ(cell.n(), 2u);
  EXPECT_TRUE(contains(harness::render_markdown(table), "‡"));
}

TEST(TableCompute, AResultWithoutTheMetricIsReportedNotZero) {
  auto j = json::parse(table_testing::kFixtureSpec);
  j["metric"]["path"] = "rougeLsum";
  const auto spec = harness::parse_table_spec(j, "x.json");
  const auto table = compute_table(spec, ResultsIndex::load(fixture_results_dir()));
  EXPECT_FALSE(table.cells[0][0].ours.has_value());
  ASSERT_FALSE(table.warnings.empty());
  EXPECT_TRUE(contains(table.warnings[0], "no 'rougeLsum' in metrics (it has: rouge1, rouge2, rougeL)")) << table.warnings[0];
}

TEST(TableCompute, GeometricMeanAndRatioMetrics) {
  auto j = json::parse(table_testing::kFixtureSpec);
  j["metric"] = {{"paths", {"rouge1", "rouge2", "rougeL"}}, {"combine", "geomean"}, {"scale", 100}};
  auto spec = harness::parse_table_spec(j, "g.json");
  auto table = compute_table(spec, ResultsIndex::load(fixture_results_dir()));
  // kvec-20pct-seed0: rouge1 0.31, rouge2 0.105, rougeL 0.21.
  EXPECT_NEAR(*table.cells[0][1].ours, 100 * std::cbrt(0.31 * 0.105 * 0.21), 1e-9);

  j = json::parse(table_testing::kFixtureSpec);
  j["metric"]["ratio_to_row"] = "KVEC";
  spec = harness::parse_table_spec(j, "r.json");
  table = compute_table(spec, ResultsIndex::load(fixture_results_dir()));
  EXPECT_NEAR(*table.cells[1][1].ours, 19.0 / 21.0, 1e-9);
  EXPECT_NEAR(*table.cells[0][1].ours, 1.0, 1e-12);
}

TEST(TableGrid, OneProductGridCoversTheFixture) {
  const auto grids = harness::table_grids(fixture_spec());
  ASSERT_EQ(grids.size(), 1u) << grids.dump(2);
  EXPECT_EQ(grids[0]["axes"]["task"], json::array({"xsum"}));
  EXPECT_EQ(grids[0]["axes"]["budget"], json::array({"50%", "20%"}));
  EXPECT_EQ(grids[0]["axes"]["model"], json::array({"stories260K"}));
  EXPECT_EQ(grids[0]["axes"]["policy"],
            json::parse(R"([{"name":"kvec","params":{}},{"name":"kvec","params":{"lambda":0.5}}])"));
  EXPECT_EQ(grids[0]["fixed"], json::parse(R"({"protocol":"stream"})"));
  EXPECT_EQ(grids[0]["name"], "fixture_xsum");
}

TEST(TableGrid, NonProductJobsSplitIntoGridsThatCoverThemExactly) {
  // K-VEC Table 1 style: the full cache at budget "full", K-VEC at 128, columns are tasks.
  const auto spec = harness::parse_table_spec(json::parse(R"({
    "title": "t", "paper": {"name": "p", "source": "s", "model": "m"},
    "fixed": {"protocol": "oneshot"}, "metric": {"path": "score"}, "seeds": [0, 1],
    "rows": [{"label": "Full", "fields": {"policy": "full", "budget": "full"}},
             {"label": "K-VEC", "fields": {"policy": "kvec", "budget": 128}}],
    "columns": [{"label": "Qasper", "fields": {"task": "longbench/qasper"}},
                {"label": "TREC", "fields": {"task": "longbench/trec", "task_params": {"max_new_tokens": 8}}},
                {"label": "Avg.", "aggregate": "mean"}]})"),
                                              "k.json");
  const auto grids = harness::table_grids(spec);
  std::multiset<std::string> covered;
  for (const auto& g : grids) {
    ASSERT_EQ(g["axes"]["seed"], json::array({0, 1}));
    for (const auto& t : g["axes"]["task"])
      for (const auto& p : g["axes"]["policy"])
        for (const auto& b : g["axes"]["budget"])
          covered.insert(t.dump() + p["name"].dump() + b.dump() + g["fixed"].dump());
  }
  const std::multiset<std::string> want = {
      R"("longbench/qasper""full""full"{"protocol":"oneshot"})",
      R"("longbench/qasper""kvec""128"{"protocol":"oneshot"})",
      R"("longbench/trec""full""full"{"protocol":"oneshot","task_params":{"max_new_tokens":8}})",
      R"("longbench/trec""kvec""128"{"protocol":"oneshot","task_params":{"max_new_tokens":8}})"};
  EXPECT_EQ(covered, want) << grids.dump(2);
}

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

// The committed specs: all parse, name only kvbench's tasks and policies, and their paper
// numbers are present exactly where the paper printed numbers.
TEST(TableSpecs, CommittedSpecsAreValid) {
  const std::set<std::string> policies = {"full", "local", "random", "streaming_llm", "h2o", "scissorhands", "tova",
                                          "snapkv", "pyramidkv", "adakv", "buzz", "bumblebee", "roco", "kvec", "cascade"};
  const auto specs = harness::load_table_specs(table_testing::repo_dir() + "/results/tables");
  ASSERT_GE(specs.size(), 20u);
  std::set<std::string> ids;
  for (const auto& spec : specs) {
    EXPECT_TRUE(ids.insert(spec.id).second) << spec.path;
    for (size_t r = 0; r < spec.rows.size(); ++r)
      for (size_t c = 0; c < spec.columns.size(); ++c) {
        if (spec.is_aggregate_column(c)) continue;
        const json job = harness::cell_job(spec, r, c);
        EXPECT_TRUE(policies.count(job["policy"])) << spec.path << ": " << job.dump();
        EXPECT_EQ(job.value("model", ""), "stories260K") << spec.path;
        // Where this build has the policy / the task's family, the spec must name them right.
        const std::string policy = job["policy"];
        bool registered = false;
        for (const auto& info : policies::registered_policies()) registered = registered || info.name == policy;
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

namespace kvbench {
namespace {

TEST(TableRanks, KendallTauB) {
  EXPECT_DOUBLE_EQ(*harness::kendall_tau_b({1, 2, 3}, {10, 20, 30}), 1.0);
  EXPECT_DOUBLE_EQ(*harness::kendall_tau_b({1, 2, 3}, {3, 2, 1}), -1.0);
  // scipy.stats.kendalltau([1, 2, 2], [1, 2, 3]) = 0.8164965809277261 (tau-b with a tie).
  EXPECT_NEAR(*harness::kendall_tau_b({1, 2, 2}, {1, 2, 3}), 0.8164965809277261, 1e-15);
  EXPECT_FALSE(harness::kendall_tau_b({1, 1, 1}, {1, 2, 3}).has_value());
}

TEST(TableRanks, AgreementWithThePaperIsReportedPerColumn) {
  auto j = json::parse(table_testing::kFixtureSpec);
  j["rows"].push_back(json::parse(R"({"label": "KVEC-2", "fields": {"policy": "kvec", "policy_params": {"lambda": 2.0}},
                                      "paper": [null, 10.0, null]})"));
  const auto spec = harness::parse_table_spec(j, "ranks.json");
  auto results = ResultsIndex::load(table_testing::fixture_results_dir());
  harness::ResultRecord lambda2 = *results.match(harness::cell_job(spec, 1, 1), {}).front();  // KVEC-0.5 at 20%
  lambda2.file = "zz-lambda2.json";
  lambda2.json["spec"]["policy_params"]["lambda"] = 2.0;
  results.add(lambda2);
  const auto table = compute_table(spec, results);
  // 20%: ours 21, 19, 19 vs the paper's 20, 18.5, 10.
  ASSERT_TRUE(table.rank_agreement[1].has_value());
  EXPECT_NEAR(*table.rank_agreement[1], 2.0 / std::sqrt(6.0), 1e-12);
  EXPECT_FALSE(table.rank_agreement[0].has_value());  // only one row has both numbers
  const std::string md = harness::render_markdown(table);
  EXPECT_NE(md.find("Rank agreement with the paper (Kendall's tau-b over the rows with both numbers; 1 = same order): "
                    "20% 0.82 (3 rows)."),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace kvbench

namespace kvbench {
namespace {

TEST(TableOverrides, SetFieldsApplyToGridAndMatching) {
  const json o = harness::command_line_overrides("", {"limit=20", "task_params.max_tokens=512", "budget=050%"});
  EXPECT_EQ(o, json::parse(R"({"limit": 20, "task_params": {"max_tokens": 512}, "budget": "50%"})"));
  EXPECT_EQ(harness::command_line_overrides("m", {"protocol=stream"}), json::parse(R"({"model": "m", "protocol": "stream"})"));
  const auto spec = table_testing::fixture_spec();
  const auto grids = harness::table_grids(spec, harness::command_line_overrides("", {"limit=20"}));
  ASSERT_EQ(grids.size(), 1u);
  EXPECT_EQ(grids[0]["fixed"], json::parse(R"({"protocol": "stream", "limit": 20})"));
  // The fixture's results ran with limit 0: none is a result of the quick run.
  const auto table = compute_table(spec, ResultsIndex::load(table_testing::fixture_results_dir()),
                                   harness::command_line_overrides("", {"limit=20"}));
  EXPECT_EQ(table.missing_cells, 4u);
  EXPECT_NE(error_of([] { harness::command_line_overrides("", {"limit"}); }).find("--set limit: expected FIELD=VALUE"),
            std::string::npos);
  EXPECT_NE(error_of([] { harness::command_line_overrides("", {"limt=3"}); }).find("--set.limt: unknown job field"),
            std::string::npos);
  EXPECT_NE(error_of([] { harness::command_line_overrides("", {"limit=abc"}); }).find("--set.limit: must be an integer"),
            std::string::npos);
}

}  // namespace
}  // namespace kvbench

namespace kvbench {
namespace {

// A needle heatmap: every cell of a policy's block comes from that policy's one job, at the
// metric path its row (depth) and column (context length) name.
TEST(TableMetricPaths, RowAndColumnKeysSelectNestedMetrics) {
  const auto spec = harness::parse_table_spec(json::parse(R"({
    "title": "needle", "paper": {"name": "K-VEC", "source": "Table 4", "model": "m", "numbers_note": "none"},
    "fixed": {"task": "xsum", "budget": "20%"},
    "metric": {"path": "heatmap.len={column},depth={row}", "decimals": 1},
    "rows": [{"label": "0%", "key": "0", "group": "KVEC", "fields": {"policy": "kvec"}},
             {"label": "50%", "key": "50", "group": "KVEC", "fields": {"policy": "kvec"}}],
    "columns": [{"label": "128"}, {"label": "256"}]})"),
                                              "needle.json");
  auto results = ResultsIndex::load(table_testing::fixture_results_dir());
  harness::ResultRecord needle = *results.match(harness::cell_job(spec, 0, 0), {}).front();
  needle.file = "zz-needle.json";
  needle.json["metrics"]["heatmap"] = {{"len=128,depth=0", 10.0}, {"len=256,depth=0", 7.5}, {"len=128,depth=50", 2.5}};
  results.add(needle);
  const auto table = compute_table(spec, results);
  // kvec-20pct-seed0 matches too but has no heatmap: reported, not averaged in.
  EXPECT_DOUBLE_EQ(*table.cells[0][0].ours, 10.0);
  EXPECT_DOUBLE_EQ(*table.cells[0][1].ours, 7.5);
  EXPECT_DOUBLE_EQ(*table.cells[1][0].ours, 2.5);
  EXPECT_FALSE(table.cells[1][1].ours.has_value());
  EXPECT_EQ(harness::cell_metric(spec, 1, 1).paths[0], "heatmap.len=256,depth=50");
  EXPECT_NE(harness::render_csv(table).find("KVEC,50%,,256,\"heatmap.len=256,depth=50\",,,0,,,missing"), std::string::npos)
      << harness::render_csv(table);
}

}  // namespace
}  // namespace kvbench
