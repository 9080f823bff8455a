// InfiniteBench's scorers against its own compute_scores.py, run on the model predictions its
// repository ships under results/ (scripts/infinitebench_reference/record.py): every example's
// score and every file's mean, number for number.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>


#include "metrics/golden.hpp"
#include "metrics/infinitebench.hpp"

namespace kvbench::metrics {
namespace {

nlohmann::json recorded_scores() { return test::load_fixture("infinitebench/scores.json"); }

TEST(InfiniteBench, ScoresEveryRecordedPredictionAsComputeScores) {
  const nlohmann::json g = recorded_scores();
  int files = 0, examples = 0;
  for (const auto& f : g["files"]) {
    if (!f.contains("examples")) continue;  // the official code raised on this file
    const std::string task = f["task"], model = f["model"];
    double sum = 0;
    for (const auto& e : f["examples"]) {
      nlohmann::json label = e.contains("label") ? e["label"] : nlohmann::json();
      if (e.contains("label_ref")) {  // math_calc's 15,000-number lists are stored once
        label = g["math_calc_label_lists"][e["label_ref"]["list"].get<std::size_t>()];
        if (e["label_ref"]["nested"].get<bool>()) label = nlohmann::json::array({label});
      }
      const double got = infinitebench_score_one(task, e["pred"].get<std::string>(), label, model);
      EXPECT_EQ(got, e["score"].get<double>()) << model << "/" << task << ": " << e["pred"].dump().substr(0, 200) << " vs " << label.dump().substr(0, 200);
      sum += got;
      ++examples;
    }
    if (!f["examples"].empty() && f.contains("mean_first_60"))
      EXPECT_DOUBLE_EQ(sum / static_cast<double>(f["examples"].size()), f["mean_first_60"].get<double>()) << model << "/" << task;
    ++files;
  }
  EXPECT_GT(files, 40);
  EXPECT_GT(examples, 1000);
}

// kvpress's copy (calculate_metrics.py) on kvpress's labels, recorded by
// scripts/infinitebench_reference/record_kvpress_scores.py: every scored case and the mean; the
// tasks its code cannot score (it raises, or code_run compares '4' with 4: always 0) are refused.
TEST(InfiniteBench, KvpressScoresEveryRecordedCaseAsCalculateMetrics) {
  const nlohmann::json g = test::load_fixture("infinitebench/kvpress_scores.json");
  int cases = 0;
  for (const auto& [task, t] : g["tasks"].items()) {
    if (t.contains("error") || task == "code_run") {
      EXPECT_FALSE(infinitebench_kvpress_scores(task)) << task;
      EXPECT_THROW(infinitebench_kvpress_score_one(task, "4", nlohmann::json::array({"4"})), std::invalid_argument) << task;
      continue;
    }
    EXPECT_TRUE(infinitebench_kvpress_scores(task)) << task;
    double sum = 0;
    for (const auto& c : t["cases"]) {
      const double got = infinitebench_kvpress_score_one(task, c["prediction"].get<std::string>(), c["label"]);
      EXPECT_EQ(got, c["score"].get<double>()) << task << ": " << c["prediction"].dump().substr(0, 200) << " vs " << c["label"].dump();
      sum += got;
      ++cases;
    }
    EXPECT_DOUBLE_EQ(sum / static_cast<double>(t["cases"].size()), t["calculate_metrics"].get<double>()) << task;
  }
  EXPECT_GT(cases, 1000);
}

TEST(InfiniteBench, UnknownTasksAndBadLabelsAreErrors) {
  EXPECT_THROW(infinitebench_score_one("nope", "x", "y", "m"), std::invalid_argument);
  EXPECT_THROW(infinitebench_score_one("math_find", "3.5", nlohmann::json::array({3}), "m"), std::invalid_argument);
}

}  // namespace
}  // namespace kvbench::metrics
