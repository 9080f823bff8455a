#pragma once
// R-KV's verdict on one generated solution: Qwen2.5-Math's grader.py math_equal, as R-KV's
// evaluation/eval_math.py reaches it (Zefan-Cai/R-KV @ d15c9767).
#include <optional>
#include <string>

namespace kvbench::metrics::qwen_math {

struct Verdict {
  std::optional<std::string> pred;  // the extracted, normalised answer (None for an empty output)
  std::string gt;                   // the gold as the reference reads it
  bool correct = false;
  bool outside_subset = false;  // decided where the symbolic comparison left kvbench's subset
};

// math_equal(prediction, reference) with its defaults (include_percentage, is_close, no timeout):
// text equal ignoring case, a letter choice, numbers within a relative 1e-4 (also the reference
// / 100 and * 100), brackets and braces ignored, tuples and matrices element by element, "x = ..."
// either side, then symbolic_equal (metrics/latex_expression.hpp).
bool math_equal(const std::optional<std::string>& prediction, const std::string& reference, bool* outside_subset = nullptr);

// eval_math.main on one sample: the output cut at its first stop word, the answer extracted and
// normalised (run_execute), the gold read (parse_ground_truth: from a worked solution's last box
// when `gold_is_solution`, else the answer field itself, strip_string'ed), the multiple-choice
// patch-ups, then math_equal.
Verdict grade(const std::string& output, const std::string& gold, bool gold_is_solution);

}  // namespace kvbench::metrics::qwen_math
