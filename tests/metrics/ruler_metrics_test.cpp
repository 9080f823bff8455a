// RULER's scorers against RULER's and kvpress's own code on adversarial cases (control characters,
// Unicode lowercasing, whitespace; scripts/ruler_reference/record_scorer_goldens.py).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

#include "metrics/golden.hpp"
#include "metrics/ruler_metrics.hpp"

namespace kvbench::metrics {
namespace {

nlohmann::json scorer_cases() { return test::load_fixture("ruler/scorer_cases.json"); }

TEST(RulerMetrics, EqualRulersEvaluateOnEveryCase) {
  const nlohmann::json g = scorer_cases();
  std::vector<double> all, part;
  for (const auto& c : g["cases"]) {
    const std::string p = ruler_postprocess(c["prediction"].get<std::string>(), RulerPostprocess::ruler);
    EXPECT_EQ(p, c["ruler_postprocessed"].get<std::string>()) << c["prediction"];
    const auto refs = c["references"].get<std::vector<std::string>>();
    all.push_back(ruler_string_match_all(p, refs));
    part.push_back(ruler_string_match_part(p, refs));
    // RULER's functions over one example are that example's value x 100, rounded.
    EXPECT_EQ(ruler_task_score({all.back()}), c["ruler_string_match_all"].get<double>()) << c["prediction"];
    EXPECT_EQ(ruler_task_score({part.back()}), c["ruler_string_match_part"].get<double>()) << c["prediction"];
  }
  EXPECT_EQ(ruler_task_score(all), g["ruler_task_all"].get<double>());
  EXPECT_EQ(ruler_task_score(part), g["ruler_task_part"].get<double>());
}

TEST(RulerMetrics, EqualKvpressCalculateMetricsPerTask) {
  const nlohmann::json g = scorer_cases();
  std::map<std::string, std::vector<double>> by_task;
  for (std::size_t i = 0; i < g["cases"].size(); ++i) {
    const auto& c = g["cases"][i];
    const std::string task = g["kvpress_tasks"][i].get<std::string>();
    const std::string p = ruler_postprocess(c["prediction"].get<std::string>(), RulerPostprocess::kvpress);
    const auto refs = c["references"].get<std::vector<std::string>>();
    by_task[task].push_back(task.rfind("qa", 0) == 0 ? ruler_string_match_part(p, refs) : ruler_string_match_all(p, refs));
  }
  for (const auto& [task, values] : by_task) EXPECT_EQ(ruler_task_score(values), g["kvpress"][task]["string_match"].get<double>()) << task;
}

// The two post-processings differ exactly where a control character splits an answer.
TEST(RulerMetrics, KvpressDeletesControlCharactersWhereRulerBreaksTheLine) {
  EXPECT_EQ(ruler_string_match_all(ruler_postprocess("a\tb", RulerPostprocess::kvpress), {"ab"}), 1.0);
  EXPECT_EQ(ruler_string_match_all(ruler_postprocess("a\tb", RulerPostprocess::ruler), {"ab"}), 0.0);
  EXPECT_THROW(ruler_string_match_all("x", {}), std::invalid_argument);
}

}  // namespace
}  // namespace kvbench::metrics
