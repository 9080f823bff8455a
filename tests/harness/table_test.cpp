// Table specs, result matching, aggregates, the Markdown/CSV/LaTeX renderings, the grids a table
// needs, rank agreement, --set overrides and metric paths. Specs that must be refused, the
// committed specs and the `kvbench table` command are in table_spec_check_test.cpp.
#include <gtest/gtest.h>

#include <set>

#include "harness/table_render.hpp"
#include "error_text.hpp"
#include "table_fixture.hpp"

namespace kvbench {
namespace {

using harness::compute_table;
using harness::ResultsIndex;
using nlohmann::json;
using table_testing::fixture_results_dir;
using table_testing::fixture_spec;

using testing::contains;
using testing::error_of;

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