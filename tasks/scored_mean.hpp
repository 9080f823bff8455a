#pragma once
// Aggregating per-example scores. A mean over zero examples is null, never 0.0, and a job that
// scored no example fails (run_task calls require_scored on every result): a table must not show
// "accuracy 0.0" for a run in which every example was skipped.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace kvbench::tasks {

// sum / count, or null when count is 0.
nlohmann::json mean_or_null(double sum, int64_t count);

// A running mean of one metric.
class MeanMetric {
 public:
  void add(double value) { sum_ += value, ++count_; }
  int64_t count() const { return count_; }
  nlohmann::json value() const { return mean_or_null(sum_, count_); }

 private:
  double sum_ = 0;
  int64_t count_ = 0;
};

// Throws std::runtime_error "<task>: no example was scored (<why>)" when scored == 0.
void require_scored(const std::string& task, int64_t scored, const std::string& why);

// Throws std::runtime_error naming the first metric (path "a.b[2]") that is NaN or infinite: a
// broken checkpoint (an overflowing rope_theta, weights of the wrong dtype) must fail its job,
// not store null (JSON has no NaN) as a finished result that a grid never runs again.
void require_finite(const std::string& task, const nlohmann::json& metrics);

// The reason run_task gives: the result's "skipped*" counters ("skipped_too_long = 3"), if any.
std::string skipped_counters(const nlohmann::json& metrics);

}  // namespace kvbench::tasks
