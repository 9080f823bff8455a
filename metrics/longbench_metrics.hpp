// LongBench (THUDM/LongBench 2e00731, LongBench/metrics.py + eval.py) English metrics and the
// aggregation of eval.py, bit for bit. The Chinese metrics (jieba) are not implemented.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kvbench::metrics {

// qa_f1_score: SQuAD normalize + token F1 (int 0 -> 0.0 when nothing overlaps).
double lb_qa_f1_score(const std::string& prediction, const std::string& ground_truth);

// rouge_score: pltrdy rouge-l f; *every* exception (empty hypothesis/reference, RecursionError)
// gives 0.0, as the reference's bare except does. kvbench's own stated bound (ScorerLimitError,
// rouge_pltrdy.hpp) is not the reference's and is thrown on.
double lb_rouge_score(const std::string& prediction, const std::string& ground_truth);

// classification_score: the classes that are substrings of the prediction (case-sensitive), then
// those that are substrings of the ground truth removed *while iterating the same list* (Python
// skips the element after each removal; reproduced); 1/len(list) if the ground truth is in it.
double lb_classification_score(const std::string& prediction, const std::string& ground_truth,
                               const std::vector<std::string>& all_classes);

// retrieval_score: the id of "Paragraph (\d+)" in the ground truth, the share of
// re.findall(r"\d+", prediction) equal to it (string equality, Unicode \d).
double lb_retrieval_score(const std::string& prediction, const std::string& ground_truth);

// count_score: the share of re.findall(r"\d+", prediction) equal to str(ground_truth).
double lb_count_score(const std::string& prediction, const std::string& ground_truth);

enum class FuzzBackend {
  Levenshtein,  // fuzzywuzzy with python-Levenshtein: ratio = (l1+l2-indel)/(l1+l2) (default)
  Difflib,      // fuzzywuzzy without it: difflib.SequenceMatcher(None, a, b).ratio(), autojunk on
};

// fuzzywuzzy fuzz.ratio(a, b): 0 if either is empty, 100 if equal, else
// int(round(100 * ratio)) with Python's round-half-even. Strings are compared by code point.
// Stated bounds (scorer_limits.hpp), ScorerLimitError beyond them: Levenshtein's LCS (bit-parallel)
// kMaxLcsLengthWords, checked first; difflib's loops kMaxDifflibSteps, counted as they run.
int fuzz_ratio(const std::string& a, const std::string& b,
               FuzzBackend backend = FuzzBackend::Levenshtein);
// python-Levenshtein ratio / difflib SequenceMatcher.ratio on code points (exposed for tests).
double levenshtein_ratio(const std::u32string& a, const std::u32string& b);
double difflib_ratio(const std::u32string& a, const std::u32string& b);

// The first line of prediction.lstrip('\n') containing none of '`', '#', "//"; "" if none.
std::string lb_first_code_line(const std::string& prediction);
// code_sim_score: fuzz_ratio(first_code_line, ground_truth) / 100.
double lb_code_sim_score(const std::string& prediction, const std::string& ground_truth,
                         FuzzBackend backend = FuzzBackend::Levenshtein);

// eval.py's first-line rule for trec, triviaqa, samsum, lsht: pred.lstrip('\n').split('\n')[0].
std::string lb_first_line(const std::string& prediction);
bool lb_uses_first_line_rule(const std::string& dataset);

// The metric eval.py's dataset2metric assigns to an English dataset, by LongBench's function
// name ("qa_f1_score", "rouge_score", ...). Throws std::invalid_argument for an unknown or
// Chinese dataset.
std::string lb_metric_for_dataset(const std::string& dataset);

// metric(prediction, ground_truth, all_classes) by function name; throws for unknown/Chinese.
double lb_metric(const std::string& metric, const std::string& prediction,
                 const std::string& ground_truth, const std::vector<std::string>& all_classes,
                 FuzzBackend backend = FuzzBackend::Levenshtein);

// Python round(x, ndigits) on a double: correctly rounded, ties to even on the exact decimal
// value of x.
double python_round(double x, int ndigits);
// numpy round(x, decimals) on a float64: y = x * 10^d; rint(y) / 10^d.
double numpy_round(double x, int decimals);

// np.mean of a float64 list: numpy's pairwise summation (8 accumulators up to 128 elements,
// halves above), divided by n. NaN for an empty list.
double numpy_mean(const std::vector<double>& values);

struct LongBenchAggregate {
  std::vector<double> per_example;  // max(0, metric over answers), after the first-line rule
  double total_score = 0.0;         // sequential float sum
  double score = 0.0;               // round(100 * total / n, 2)
};

// eval.py scorer(dataset, predictions, answers, all_classes). Throws on size mismatch or n = 0.
LongBenchAggregate lb_scorer(const std::string& dataset, const std::vector<std::string>& predictions,
                             const std::vector<std::vector<std::string>>& answers,
                             const std::vector<std::string>& all_classes,
                             FuzzBackend backend = FuzzBackend::Levenshtein);

// eval.py scorer_e: buckets by length 0-4k (< 4000), 4-8k (< 8000), 8k+; each
// round(100 * np.mean(bucket), 2) with numpy's rounding; an empty bucket is nullopt (NaN there).
struct LongBenchBuckets {
  std::optional<double> b0_4k, b4_8k, b8k_plus;
};
LongBenchBuckets lb_scorer_e(const std::string& dataset, const std::vector<std::string>& predictions,
                             const std::vector<std::vector<std::string>>& answers,
                             const std::vector<long long>& lengths,
                             const std::vector<std::string>& all_classes,
                             FuzzBackend backend = FuzzBackend::Levenshtein);

}  // namespace kvbench::metrics
