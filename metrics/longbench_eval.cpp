// eval.py's scorer / scorer_e. Declared in longbench_metrics.hpp.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "metrics/longbench_metrics.hpp"

namespace kvbench::metrics {

namespace {

// max(0., metric(pred, gt) for gt in answers), after the first-line rule.
std::vector<double> example_scores(const std::string& dataset,
                                   const std::vector<std::string>& predictions,
                                   const std::vector<std::vector<std::string>>& answers,
                                   const std::vector<std::string>& all_classes, FuzzBackend backend) {
  if (predictions.size() != answers.size()) {
    throw std::invalid_argument("LongBench scorer: " + std::to_string(predictions.size()) +
                                " predictions but " + std::to_string(answers.size()) + " answer lists");
  }
  std::string metric = lb_metric_for_dataset(dataset);
  bool first_line = lb_uses_first_line_rule(dataset);
  std::vector<double> out;
  out.reserve(predictions.size());
  for (size_t i = 0; i < predictions.size(); ++i) {
    std::string pred = first_line ? lb_first_line(predictions[i]) : predictions[i];
    double score = 0.0;
    for (const auto& gt : answers[i]) score = std::max(score, lb_metric(metric, pred, gt, all_classes, backend));
    out.push_back(score);
  }
  return out;
}

// numpy's pairwise summation of float64 (8 accumulators up to 128 elements, halves above).
double numpy_pairwise_sum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + static_cast<size_t>(j)];
    }
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_pairwise_sum(a, n2) + numpy_pairwise_sum(a + n2, n - n2);
}

std::optional<double> bucket_score(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;  // np.mean([]) is NaN
  return numpy_round(100 * numpy_mean(v), 2);
}

}  // namespace

double numpy_mean(const std::vector<double>& values) {
  if (values.empty()) return std::nan("");
  return numpy_pairwise_sum(values.data(), values.size()) / static_cast<double>(values.size());
}

LongBenchAggregate lb_scorer(const std::string& dataset, const std::vector<std::string>& predictions,
                             const std::vector<std::vector<std::string>>& answers,
                             const std::vector<std::string>& all_classes, FuzzBackend backend) {
  if (predictions.empty()) throw std::invalid_argument("LongBench scorer: no predictions");
  LongBenchAggregate agg;
  agg.per_example = example_scores(dataset, predictions, answers, all_classes, backend);
  for (double s : agg.per_example) agg.total_score += s;
  agg.score = python_round(100 * agg.total_score / static_cast<double>(predictions.size()), 2);
  return agg;
}

LongBenchBuckets lb_scorer_e(const std::string& dataset, const std::vector<std::string>& predictions,
                             const std::vector<std::vector<std::string>>& answers,
                             const std::vector<long long>& lengths,
                             const std::vector<std::string>& all_classes, FuzzBackend backend) {
  if (lengths.size() != predictions.size()) {
    throw std::invalid_argument("LongBench scorer_e: lengths and predictions differ in size");
  }
  auto scores = example_scores(dataset, predictions, answers, all_classes, backend);
  std::vector<double> b0, b1, b2;
  for (size_t i = 0; i < scores.size(); ++i) {
    (lengths[i] < 4000 ? b0 : lengths[i] < 8000 ? b1 : b2).push_back(scores[i]);
  }
  return {bucket_score(b0), bucket_score(b1), bucket_score(b2)};
}

}  // namespace kvbench::metrics
