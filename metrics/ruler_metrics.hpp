#pragma once
// RULER's scorers (scripts/eval/evaluate.py and eval/synthetic/constants.py): a prediction is
// post-processed, then each reference counts when its lowercase form is a substring of the
// prediction's (Python's str.lower: full Unicode lowercasing, final sigma). string_match_all is
// the share of references found, string_match_part whether any is; a task's score is
// round(sum / n * 100, 2). kvpress's evaluation (benchmarks/ruler/calculate_metrics.py) deletes
// control characters where RULER turns them into newlines: the `kvpress` post-processing.
#include <string>
#include <vector>

namespace kvbench::metrics {

enum class RulerPostprocess { ruler, kvpress };

// RULER: strip(), every [\x00-\x1f] -> "\n", strip(). kvpress: strip(), deleted, strip().
std::string ruler_postprocess(const std::string& prediction, RulerPostprocess mode);

// One example's value in [0, 1], on an already post-processed prediction.
double ruler_string_match_all(const std::string& prediction, const std::vector<std::string>& references);
double ruler_string_match_part(const std::string& prediction, const std::vector<std::string>& references);

// A task's score from its examples' values: round(sum(values) / len(values) * 100, 2).
double ruler_task_score(const std::vector<double>& values);

}  // namespace kvbench::metrics
