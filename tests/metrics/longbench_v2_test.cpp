// LongBench-v2's answer extraction and accuracies against pred.py's extract_answer and result.py,
// run on 49 adversarial responses and three prediction files
// (scripts/longbench_v2_reference/record.py).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

#include "metrics/golden.hpp"
#include "metrics/longbench_v2.hpp"

namespace kvbench::metrics {
namespace {

nlohmann::json reference_cases() { return test::load_fixture("longbench_v2/reference_cases.json"); }

// Python's str() of round(x, 1): "6.2", "0.0", "100.0".
std::string one_decimal(double v) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << v;
  return os.str();
}

TEST(LongBenchV2, ExtractsTheAnswerAsPredPy) {
  for (const auto& c : reference_cases()["extract"]) {
    const std::optional<char> got = longbench_v2_extract_answer(c["response"].get<std::string>());
    const nlohmann::json as_json = got ? nlohmann::json(std::string(1, *got)) : nlohmann::json(nullptr);
    EXPECT_EQ(as_json, c["pred"]) << c["response"];
  }
}

// kvpress's score (calculate_metrics.py) on the same responses against every letter
// (scripts/longbench_v2_reference/record_kvpress.py): any occurrence of the right answer counts.
TEST(LongBenchV2, ScoresAsKvpressCalculateMetrics) {
  const nlohmann::json g = test::load_fixture("longbench_v2/kvpress_reference.json");
  int differs_from_extract = 0;
  for (const auto& c : g["scores"]) {
    const std::string response = c["response"], answer = c["answer"];
    EXPECT_EQ(longbench_v2_kvpress_correct(response, answer), c["score"].get<bool>()) << response << " / " << answer;
    const std::optional<char> first = longbench_v2_extract_answer(response);
    differs_from_extract += (first && std::string(1, *first) == answer) != c["score"].get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(g["scores"].size(), 196u);
  EXPECT_GT(differs_from_extract, 0);  // the cases where it is not pred.py's rule
}

TEST(LongBenchV2, PrintsResultPysLine) {
  for (const auto& f : reference_cases()["result"]["files"]) {
    std::vector<LongBenchV2Judged> items;
    for (const auto& it : f["items"])
      items.push_back({it["difficulty"], it["length"], it["judge"].get<bool>(), it["pred"].is_null()});
    for (const bool compensated : {false, true}) {
      const LongBenchV2Accuracy a = longbench_v2_accuracy(items, compensated);
      std::string line = f["model_name"].get<std::string>();
      for (const auto& v : {a.overall, a.easy, a.hard, a.short_, a.medium, a.long_}) line += "\t" + one_decimal(v.value());
      EXPECT_EQ(line, f[compensated ? "line_compensated_true" : "line_compensated_false"].get<std::string>()) << f["file"];
    }
  }
}

TEST(LongBenchV2, AnEmptyBucketHasNoAccuracy) {
  const LongBenchV2Accuracy a = longbench_v2_accuracy({{"easy", "short", true, false}}, false);
  EXPECT_EQ(a.overall, 100.0);
  EXPECT_FALSE(a.hard.has_value());  // result.py divides by zero here
}

}  // namespace
}  // namespace kvbench::metrics
