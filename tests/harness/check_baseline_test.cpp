// The nightly check's comparison: tolerances per metric, and every way a cell can go wrong.
#include <gtest/gtest.h>

#include "harness/check_baseline.hpp"

namespace kvbench::harness {
namespace {

nlohmann::json baseline_with(const nlohmann::json& metrics) {
  return {{"tolerances", {{"default", {{"abs", 0}, {"rel", 0}}}, {"mean_nll", {{"abs", 1e-4}}}, {"perplexity", {{"rel", 1e-3}}}}},
          {"cells", {{{"cell", {{"policy", "kvec"}}}, {"description", "kvec cell"}, {"metrics", metrics}}}}};
}

std::vector<CurrentCell> current_with(const nlohmann::json& metrics) {
  return {{{{"policy", "kvec"}}, "kvec cell", "id", metrics, ""}};
}

const nlohmann::json kMetrics = {{"mean_nll", 1.5}, {"perplexity", 4.4817}, {"tokens", 300}, {"mode", "stream"}};

TEST(CheckBaseline, ToleranceIsAbsolutePlusRelative) {
  Tolerance t{0.1, 0.01};
  EXPECT_TRUE(t.allows(10.0, 10.2));   // 0.2 <= 0.1 + 0.1
  EXPECT_FALSE(t.allows(10.0, 10.21));
  EXPECT_TRUE(t.allows(-10.0, -10.2));
  EXPECT_FALSE(Tolerance{}.allows(1.0, 1.0 + 1e-15));
  EXPECT_TRUE(Tolerance{}.allows(1.0, 1.0));
  EXPECT_FALSE(t.allows(1.0, NAN));
}

TEST(CheckBaseline, PassesWithinToleranceAndFailsBeyond) {
  nlohmann::json base = baseline_with(kMetrics);
  nlohmann::json within = kMetrics;
  within["mean_nll"] = 1.5 + 0.9e-4;
  within["perplexity"] = 4.4817 * (1 + 0.9e-3);
  EXPECT_TRUE(compare_to_baseline(base, current_with(within)).passed());

  nlohmann::json moved = kMetrics;
  moved["mean_nll"] = 1.5 + 1.1e-4;
  CheckReport report = compare_to_baseline(base, current_with(moved));
  ASSERT_FALSE(report.passed());
  EXPECT_EQ(report.cells[0].status, CellDiff::Status::kMoved);
  const std::string text = report.render(false);
  EXPECT_NE(text.find("MOVED"), std::string::npos) << text;
  EXPECT_NE(text.find("! mean_nll: 1.50011 vs baseline 1.5"), std::string::npos) << text;
  EXPECT_EQ(text.find("perplexity"), std::string::npos) << "passing metrics of a moved cell are not listed:\n" << text;

  nlohmann::json count = kMetrics;
  count["tokens"] = 301;  // exact by the default tolerance
  EXPECT_FALSE(compare_to_baseline(base, current_with(count)).passed());
  nlohmann::json text_metric = kMetrics;
  text_metric["mode"] = "documents";
  EXPECT_FALSE(compare_to_baseline(base, current_with(text_metric)).passed());
}

TEST(CheckBaseline, FailsOnAMissingMetricResultOrCell) {
  nlohmann::json base = baseline_with(kMetrics);
  nlohmann::json fewer = kMetrics;
  fewer.erase("tokens");
  EXPECT_FALSE(compare_to_baseline(base, current_with(fewer)).passed());

  std::vector<CurrentCell> no_result = current_with(nullptr);
  no_result[0].error = "out of memory";
  CheckReport r = compare_to_baseline(base, no_result);
  ASSERT_FALSE(r.passed());
  EXPECT_NE(r.render(false).find("no result: out of memory"), std::string::npos);

  std::vector<CurrentCell> other = current_with(kMetrics);
  other[0].cell = {{"policy", "bumblebee"}};
  r = compare_to_baseline(base, other);
  ASSERT_EQ(r.cells.size(), 2u);  // a cell the baseline lacks, and a baseline cell the grid lacks
  EXPECT_EQ(r.cells[0].status, CellDiff::Status::kNotInBaseline);
  EXPECT_EQ(r.cells[1].status, CellDiff::Status::kNotInGrid);
  // A metric the baseline lacks is unchecked, so it fails until --update records it.
  nlohmann::json more = kMetrics;
  more["extra"] = 1;
  r = compare_to_baseline(base, current_with(more));
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.render(false).find("! extra: 1 vs baseline (absent)"), std::string::npos) << r.render(false);
}

TEST(CheckBaseline, ABaselineThatChecksNothingOrMisspellsAFieldIsRefused) {
  const nlohmann::json good = baseline_with(kMetrics);
  EXPECT_NO_THROW(validate_baseline(good, "b.json"));
  auto refused = [&](nlohmann::json bad, const std::string& needle) {
    try {
      validate_baseline(bad, "b.json");
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  nlohmann::json bad = good;
  bad["cells"][0]["metrics"] = nlohmann::json::object();  // would pass whatever the run gives
  refused(bad, "b.json: field 'cells[0]': 'metrics' is empty");
  bad = good;
  bad["tolerance"] = nlohmann::json::object();
  refused(bad, "field 'tolerance' is not a baseline field");
  bad = good;
  bad["tolerances"]["perplexty"] = {{"abs", 100}};
  refused(bad, "field 'tolerances.perplexty': no cell has a metric of this name");
  bad = good;
  bad["cells"][0]["extra_unknown"] = 1;
  refused(bad, "field 'cells[0]': 'extra_unknown' is not a cell field");
  bad = good;
  bad["cells"].push_back(good["cells"][0]);
  refused(bad, "field 'cells[1]' repeats the cell of cells[0]");
}

TEST(CheckBaseline, UpdateKeepsTolerancesAndValidationNamesTheField) {
  nlohmann::json previous = baseline_with(kMetrics);
  nlohmann::json updated = make_baseline("grids/x.json", current_with(kMetrics), previous);
  EXPECT_EQ(updated["tolerances"], previous["tolerances"]);
  EXPECT_TRUE(compare_to_baseline(updated, current_with(kMetrics)).passed());
  EXPECT_THROW(make_baseline("g", current_with(nullptr), previous), std::runtime_error);
  nlohmann::json bad = previous;
  bad["tolerances"]["mean_nll"] = {{"abs", -1}};
  try {
    validate_baseline(bad, "nightly.json");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nightly.json: field 'tolerances.mean_nll.abs'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvbench::harness
