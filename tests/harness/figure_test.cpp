// Figures: data and gnuplot script always; PNG and SVG when gnuplot is installed.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "cli/run_binary.hpp"
#include "harness/figure.hpp"
#include "table_fixture.hpp"

namespace kvbench {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;


bool has_gnuplot() { return !harness::find_gnuplot().empty(); }

void expect_images(const harness::FigureFiles& files) {
  ASSERT_TRUE(fs::exists(files.png));
  ASSERT_TRUE(fs::exists(files.svg));
  EXPECT_GT(fs::file_size(files.png), 1000u);
  std::ifstream png(files.png, std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  const std::string svg = table_testing::read_text(files.svg);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(Figure, LinesDataHoldOursAndThePapersNumbers) {
  table_testing::TempDir dir;
  const auto spec = table_testing::fixture_spec();
  const auto table = harness::compute_table(spec, harness::ResultsIndex::load(table_testing::fixture_results_dir()));
  const auto files = harness::draw_figure(spec, table, dir.path.string(), /*render=*/false);
  const std::string data = table_testing::read_text(files.data);
  // x, label, then (ours, paper) for KVEC and KVEC-0.5; the Avg. column is not plotted.
  EXPECT_NE(data.find("50\t50%\t32\t30\tNaN\tNaN\n"), std::string::npos) << data;
  EXPECT_NE(data.find("20\t20%\t21\t20\t19\t18.5\n"), std::string::npos) << data;
  EXPECT_EQ(data.find("Avg."), std::string::npos) << data;
  const std::string script = table_testing::read_text(files.script);
  EXPECT_NE(script.find("set terminal svg"), std::string::npos);
  EXPECT_NE(script.find("set output 'fixture_xsum.png'"), std::string::npos);
  EXPECT_NE(script.find("title 'KVEC (paper)'"), std::string::npos) << script;
}

TEST(Figure, LinesRenderPngAndSvg) {
  if (!has_gnuplot()) GTEST_SKIP() << "gnuplot is not installed (apt-get install gnuplot-nox): figure not rendered";
  table_testing::TempDir dir;
  const auto spec = table_testing::fixture_spec();
  const auto table = harness::compute_table(spec, harness::ResultsIndex::load(table_testing::fixture_results_dir()));
  expect_images(harness::draw_figure(spec, table, (dir.path / "fig").string()));
}

TEST(Figure, HeatmapAndBarsRender) {
  if (!has_gnuplot()) GTEST_SKIP() << "gnuplot is not installed (apt-get install gnuplot-nox): figure not rendered";
  for (const char* type : {"heatmap", "bars"}) {
    table_testing::TempDir dir;
    auto j = json::parse(table_testing::kFixtureSpec);
    j["figure"]["type"] = type;
    const auto spec = harness::parse_table_spec(j, std::string(type) + ".json");
    const auto table = harness::compute_table(spec, harness::ResultsIndex::load(table_testing::fixture_results_dir()));
    const auto files = harness::draw_figure(spec, table, dir.path.string());
    expect_images(files);
    if (std::string(type) == "heatmap") {
      EXPECT_NE(table_testing::read_text(files.data).find("1\t0\t21\t21.0\n"), std::string::npos) << table_testing::read_text(files.data);
    }
  }
}

TEST(Figure, StreamCurveIsSmoothedFromTheResultsNllCurve) {
  const auto results = harness::ResultsIndex::load(table_testing::fixture_results_dir());
  const auto matched = results.match(json{{"task", "tinystories"}, {"policy", "full"}, {"budget", "full"}}, {});
  ASSERT_EQ(matched.size(), 1u);
  std::string warning;
  const auto nll = harness::mean_curve(matched, &warning);
  ASSERT_EQ(nll.size(), 300u);
  EXPECT_NEAR(nll[0], 3.0, 1e-12);
  harness::FigureSpec f;
  f.window = 10;
  auto moving = harness::smooth_curve(nll, f);
  double want = 0;
  for (size_t i = 90; i < 100; ++i) want += nll[i];
  EXPECT_NEAR(moving[99], want / 10, 1e-12);
  f.curve = "cumulative";
  f.y = "perplexity";
  auto cumulative = harness::smooth_curve(nll, f);
  double all = 0;
  for (double v : nll) all += v;
  EXPECT_NEAR(cumulative.back(), std::exp(all / 300), 1e-9);

  if (!has_gnuplot()) GTEST_SKIP() << "gnuplot is not installed: stream figure not rendered";
  table_testing::TempDir dir;
  const auto spec = harness::parse_table_spec(json::parse(R"({
    "title": "stream", "paper": {"name": "Cascade", "source": "Figure 6", "model": "LLaMA2-7B", "numbers_note": "figure"},
    "fixed": {"task": "tinystories", "task_params": {"mode": "stream"}, "budget": "full"}, "metric": {"path": "perplexity"},
    "rows": [{"label": "Full", "fields": {"policy": "full"}}], "columns": [{"label": "all"}],
    "figure": {"type": "stream", "curve": "moving", "window": 16, "y": "perplexity"}})"),
                                              "stream.json");
  const auto table = harness::compute_table(spec, results);
  const auto files = harness::draw_figure(spec, table, dir.path.string());
  expect_images(files);
  EXPECT_TRUE(files.warnings.empty());
}

// A curve-file row runs no job: it needs no task, and its cell is not a missing result.
TEST(Figure, ACurveFileRowNeedsNoJob) {
  table_testing::TempDir dir;
  const std::string curve = dir.write("c.tsv", "token_index\tnll\n1\t2.0\n2\t1.5\n3\t1.0\n");
  const auto spec = harness::parse_table_spec(json::parse(R"({
    "title": "curve", "paper": {"name": "X", "source": "F", "model": "stories260K"}, "metric": {"path": "perplexity"},
    "rows": [{"label": "r", "curve_file": ")" + curve + R"("}], "columns": [{"label": "c"}],
    "figure": {"type": "stream", "curve": "cumulative"}})"),
                                              "curve.json");
  const auto table = harness::compute_table(spec, harness::ResultsIndex::load(dir.path.string()));
  EXPECT_EQ(table.job_cells, 0u);
  EXPECT_EQ(table.missing_cells, 0u);
  if (!has_gnuplot()) GTEST_SKIP() << "gnuplot is not installed: curve not rendered";
  const auto files = harness::draw_figure(spec, table, dir.path.string());
  expect_images(files);
  EXPECT_TRUE(files.warnings.empty());
}

TEST(Figure, CliWritesAllFourFiles) {
  if (!has_gnuplot()) GTEST_SKIP() << "gnuplot is not installed (apt-get install gnuplot-nox): figure not rendered";
  table_testing::TempDir dir;
  const std::string spec = dir.write("fixture_xsum.json", table_testing::kFixtureSpec);
  const std::string out = (dir.path / "out").string();
  const auto r = testing::run_kvbench("figure " + spec + " --results " + table_testing::fixture_results_dir() + " --out " +
                                      out + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* ext : {".png", ".svg", ".dat", ".gp"})
    EXPECT_GT(fs::file_size(out + "/fixture_xsum" + ext), 100u) << ext;
}

// Every file is replaced whole (temporary file, rename): a hard link to the old file keeps the
// old bytes, which an in-place rewrite would have overwritten, and no temporary is left behind.
TEST(Figure, FilesAreReplacedAtomically) {
  table_testing::TempDir dir;
  const auto spec = table_testing::fixture_spec("fixture_xsum.json");
  const auto table = harness::compute_table(spec, harness::ResultsIndex::load(table_testing::fixture_results_dir()));
  const fs::path out = dir.path / "fig";
  fs::create_directories(out);
  const bool render = has_gnuplot();
  std::vector<std::string> exts = {".dat", ".gp"};
  if (render) exts.insert(exts.end(), {".png", ".svg"});
  for (const auto& ext : exts) {
    std::ofstream(out / ("fixture_xsum" + ext)) << "old";
    fs::create_hard_link(out / ("fixture_xsum" + ext), dir.path / ("kept" + ext));
  }
  harness::draw_figure(spec, table, out.string(), render);
  for (const auto& ext : exts) {
    EXPECT_EQ(table_testing::read_text((dir.path / ("kept" + ext)).string()), "old") << ext;
    EXPECT_NE(table_testing::read_text((out / ("fixture_xsum" + ext)).string()), "old") << ext;
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names.size(), exts.size()) << ::testing::PrintToString(names);
}

TEST(Figure, ASpecWithoutAFigureIsAClearError) {
  auto j = json::parse(table_testing::kFixtureSpec);
  j.erase("figure");
  const auto spec = harness::parse_table_spec(j, "nofig.json");
  const auto table = harness::compute_table(spec, harness::ResultsIndex());
  try {
    harness::draw_figure(spec, table, "/tmp", false);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nofig.json: figure: the spec has no figure section"), std::string::npos);
  }
}

}  // namespace
}  // namespace kvbench
