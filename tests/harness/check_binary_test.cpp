// The nightly check passes on the committed baseline and names the cell and metric of a
// deliberately perturbed one; the demo runs.
#include <gtest/gtest.h>

#include "harness/harness_fixture.hpp"

namespace kvbench::testing {
namespace {

TEST(KvbenchCheck, PassesOnTheCommittedBaselineAndCatchesAPerturbedOne) {
  const fs::path root = source_root();
  const std::string grid = (root / "grids/nightly.json").string();
  const std::string baseline = (root / "results/baselines/nightly.json").string();
  ASSERT_TRUE(fs::exists(grid)) << grid;
  ASSERT_TRUE(fs::exists(baseline)) << baseline;
  TempDir dir;
  const std::string results = dir / "runs";
  CommandResult ok = run_kvbench("check " + grid + " --baseline " + baseline + " --results " + results + " --quiet");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("check passed"), std::string::npos) << ok.output;

  // Perturb one cell's perplexity by 1% (its tolerance is 1e-4 relative).
  nlohmann::json perturbed = nlohmann::json::parse(std::ifstream(baseline));
  nlohmann::json& cell = perturbed["cells"][1];
  cell["metrics"]["perplexity"] = cell["metrics"]["perplexity"].get<double>() * 1.01;
  const std::string bad = write_json(dir / "perturbed.json", perturbed);
  // Reusing the results of the first check keeps this fast; the comparison is what is tested.
  CommandResult moved =
      run_kvbench("check " + grid + " --baseline " + bad + " --results " + results + " --reuse-results --quiet");
  EXPECT_EQ(moved.exit_code, 1) << moved.output;
  EXPECT_NE(moved.output.find("MOVED   " + cell["description"].get<std::string>()), std::string::npos) << moved.output;
  EXPECT_NE(moved.output.find("! perplexity:"), std::string::npos) << moved.output;
  EXPECT_NE(moved.output.find("check FAILED"), std::string::npos) << moved.output;

  // A baseline cell the grid no longer produces is a failure too.
  nlohmann::json extra = nlohmann::json::parse(std::ifstream(baseline));
  nlohmann::json gone = extra["cells"][0];
  gone["cell"]["seed"] = 12345;
  extra["cells"].push_back(gone);
  CommandResult missing = run_kvbench("check " + grid + " --baseline " + write_json(dir / "extra.json", extra) +
                                      " --results " + results + " --reuse-results --quiet");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("GONE"), std::string::npos) << missing.output;

  // A baseline recorded for another grid is refused before anything runs.
  nlohmann::json other = nlohmann::json::parse(std::ifstream(baseline));
  other["grid"] = "grids/policies_vs_budget.json";
  const std::string other_file = dir / "other.json";
  {
    std::ofstream(other_file) << other.dump(2);
  }
  CommandResult wrong_grid = run_kvbench("check " + grid + " --baseline " + other_file + " --quiet 2>&1");
  EXPECT_EQ(wrong_grid.exit_code, 1) << wrong_grid.output;
  EXPECT_NE(wrong_grid.output.find(other_file + ": field 'grid': this baseline was recorded for "
                                                "grids/policies_vs_budget.json"),
            std::string::npos)
      << wrong_grid.output;

  // Without --reuse-results a directory holding results is refused: check never reuses them.
  CommandResult stale = run_kvbench("check " + grid + " --baseline " + baseline + " --results " + results + " --quiet 2>&1");
  EXPECT_EQ(stale.exit_code, 1) << stale.output;
  EXPECT_NE(stale.output.find("--results " + results + ": must be a new or empty directory"), std::string::npos)
      << stale.output;
}

TEST(KvbenchDemo, QuickDemoPrintsTheTable) {
  TempDir dir;
  CommandResult r = run_kvbench("demo --quick --quiet --results " + (dir / "runs"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("full cache"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("budget 32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kvec"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("FAILED"), std::string::npos) << r.output;
  EXPECT_GE(result_ids(dir / "runs").size(), 2u);
}

}  // namespace
}  // namespace kvbench::testing
