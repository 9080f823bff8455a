#include "metrics/ruler_metrics.hpp"

#include <stdexcept>

#include "metrics/aggregate.hpp"
#include "metrics/longbench_metrics.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {
namespace {

std::u32string strip(const std::u32string& s) {
  std::size_t begin = 0, end = s.size();
  while (begin < end && python_isspace(s[begin])) ++begin;
  while (end > begin && python_isspace(s[end - 1])) --end;
  return s.substr(begin, end - begin);
}

bool contains_lower(const std::string& lowered_prediction, const std::string& reference) {
  return lowered_prediction.find(python_lower(reference)) != std::string::npos;
}

}  // namespace

std::string ruler_postprocess(const std::string& prediction, RulerPostprocess mode) {
  std::u32string out;
  for (char32_t c : strip(utf8_decode(prediction))) {
    if (c <= 0x1f) {
      if (mode == RulerPostprocess::ruler) out.push_back(U'\n');
    } else {
      out.push_back(c);
    }
  }
  return utf8_encode(strip(out));
}

double ruler_string_match_all(const std::string& prediction, const std::vector<std::string>& references) {
  if (references.empty()) throw std::invalid_argument("string_match_all: no references (RULER divides by their number)");
  const std::string lowered = python_lower(prediction);
  std::vector<double> found;
  for (const std::string& r : references) found.push_back(contains_lower(lowered, r) ? 1.0 : 0.0);
  return python_sum(found) / static_cast<double>(references.size());
}

double ruler_string_match_part(const std::string& prediction, const std::vector<std::string>& references) {
  if (references.empty()) throw std::invalid_argument("string_match_part: no references (max() of an empty list)");
  const std::string lowered = python_lower(prediction);
  for (const std::string& r : references)
    if (contains_lower(lowered, r)) return 1.0;
  return 0.0;
}

double ruler_task_score(const std::vector<double>& values) {
  if (values.empty()) throw std::invalid_argument("RULER score: no predictions (RULER divides by their number)");
  return python_round(python_sum(values) / static_cast<double>(values.size()) * 100, 2);
}

}  // namespace kvbench::metrics
