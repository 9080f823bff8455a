#pragma once
// LongBench-v2's scoring (THUDM/LongBench @ 2e00731f): pred.py's extract_answer and result.py's
// accuracies (overall, easy / hard, short / medium / long), bit for bit.
#include <optional>
#include <string>
#include <vector>

namespace kvbench::metrics {

// extract_answer: asterisks removed, then the first "The correct answer is (X)", else the first
// "The correct answer is X", X in A-D; nullopt when neither occurs.
std::optional<char> longbench_v2_extract_answer(const std::string& response);

struct LongBenchV2Judged {
  std::string difficulty;  // "easy" or anything else (hard)
  std::string length;      // "short", "medium", anything else (long)
  bool judge = false;      // pred == answer
  bool pred_missing = false;
};

// result.py's line: round(100 * accuracy, 1) overall and per bucket (null for an empty bucket,
// where result.py divides by zero); `compensated`: a missing answer counts 0.25.
struct LongBenchV2Accuracy {
  std::optional<double> overall, easy, hard, short_, medium, long_;
};
// kvpress's score (evaluation/benchmarks/longbenchv2/calculate_metrics.py): asterisks removed, then
// "The correct answer is (X)" or "The correct answer is X" anywhere in the response, X the answer.
// Unlike extract_answer it never reads the first answer given: any occurrence of the right one counts.
bool longbench_v2_kvpress_correct(const std::string& response, const std::string& answer);

LongBenchV2Accuracy longbench_v2_accuracy(const std::vector<LongBenchV2Judged>& items, bool compensated);

}  // namespace kvbench::metrics
