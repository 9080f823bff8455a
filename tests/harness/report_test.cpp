// The HTML report: every table of a specs folder, figures inlined.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/run_binary.hpp"
#include "harness/figure.hpp"
#include "harness/report.hpp"
#include "table_fixture.hpp"

namespace kvbench {
namespace {

using nlohmann::json;

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(Report, ContainsEveryTableAndItsFigure) {
  table_testing::TempDir dir;
  dir.write("tables/a_fixture.json", table_testing::kFixtureSpec);
  auto j = json::parse(table_testing::kFixtureSpec);
  j["title"] = "Second table <no figure>";
  j.erase("figure");
  dir.write("tables/b_second.json", j.dump());
  harness::ReportOptions options;
  options.results_dir = table_testing::fixture_results_dir();
  options.tables_dir = (dir.path / "tables").string();
  const std::string html = harness::build_report(options);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(html, "<section class=\"table\""), 2u);
  EXPECT_NE(html.find("id=\"a_fixture\""), std::string::npos);
  EXPECT_NE(html.find("id=\"b_second\""), std::string::npos);
  EXPECT_NE(html.find("Second table &lt;no figure&gt;"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"ours\">32.0 ± 1.4 (n=2)</td><td class=\"paper\">30.0</td><td class=\"diff\">+2.0</td>"),
            std::string::npos);
  EXPECT_NE(html.find("6 of 8 cells filled"), std::string::npos);
  if (harness::find_gnuplot().empty()) {
    EXPECT_NE(html.find("Figure not drawn: gnuplot is not installed"), std::string::npos);
    GTEST_SKIP() << "gnuplot is not installed: figures not inlined";
  }
  EXPECT_EQ(count(html, "<div class=\"figure\"><svg"), 1u);
  EXPECT_EQ(html.find("<?xml"), std::string::npos);  // inlined SVG carries no prolog
}

// The page is replaced whole (unique temporary, rename): a hard link keeps the old bytes and a
// stale "<out>.tmp" (the old fixed temporary name) is no obstacle; a bad --set stops the report.
TEST(Report, CliWritesThePageAtomically) {
  table_testing::TempDir dir;
  dir.write("tables/a_fixture.json", table_testing::kFixtureSpec);
  const std::string page = dir.write("out/report.html", "old");
  std::filesystem::create_hard_link(page, (dir.path / "kept.html").string());
  std::filesystem::create_directories(page + ".tmp");
  const std::string args = "report --no-figures --tables " + (dir.path / "tables").string() + " --results " +
                           table_testing::fixture_results_dir() + " --out " + page;
  auto r = testing::run_kvbench(args + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream kept((dir.path / "kept.html").string()), fresh(page);
  std::string kept_text, fresh_text;
  std::getline(kept, kept_text);
  std::getline(fresh, fresh_text);
  EXPECT_EQ(kept_text, "old");
  EXPECT_EQ(fresh_text.rfind("<!DOCTYPE html>", 0), 0u) << fresh_text;

  r = testing::run_kvbench(args + " --set limit=-2 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("a_fixture.json: rows[0] x columns[0] (KVEC / 50%) with --model/--set: job spec: field "
                          "'limit' must be an integer >= 0"),
            std::string::npos)
      << r.output;
}

TEST(Report, CommittedSpecsAllRender) {
  harness::ReportOptions options;
  options.results_dir = table_testing::fixture_results_dir();
  options.tables_dir = table_testing::repo_dir() + "/results/tables";
  options.figures = false;
  const std::string html = harness::build_report(options);
  const auto specs = harness::load_table_specs(options.tables_dir);
  for (const auto& spec : specs) EXPECT_NE(html.find("id=\"" + spec.id + "\""), std::string::npos) << spec.id;
  EXPECT_EQ(count(html, "<section class=\"table\""), specs.size());
}

}  // namespace
}  // namespace kvbench
