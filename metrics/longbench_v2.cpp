#include "metrics/longbench_v2.hpp"

#include "metrics/longbench_metrics.hpp"
#include "metrics/python_str.hpp"

namespace kvbench::metrics {
namespace {

const std::string kLead = "The correct answer is ";

bool is_choice(char c) { return c >= 'A' && c <= 'D'; }

}  // namespace

std::optional<char> longbench_v2_extract_answer(const std::string& response) {
  std::string r;
  for (char c : response)
    if (c != '*') r.push_back(c);
  for (std::size_t at = r.find(kLead); at != std::string::npos; at = r.find(kLead, at + 1)) {  // \(([A-D])\)
    const std::size_t p = at + kLead.size();
    if (p + 2 < r.size() && r[p] == '(' && is_choice(r[p + 1]) && r[p + 2] == ')') return r[p + 1];
  }
  for (std::size_t at = r.find(kLead); at != std::string::npos; at = r.find(kLead, at + 1)) {  // ([A-D])
    const std::size_t p = at + kLead.size();
    if (p < r.size() && is_choice(r[p])) return r[p];
  }
  return std::nullopt;
}

LongBenchV2Accuracy longbench_v2_accuracy(const std::vector<LongBenchV2Judged>& items, bool compensated) {
  double easy = 0, hard = 0, short_ = 0, medium = 0, long_ = 0;
  double easy_acc = 0, hard_acc = 0, short_acc = 0, medium_acc = 0, long_acc = 0;
  for (const LongBenchV2Judged& it : items) {
    double acc = it.judge ? 1 : 0;
    if (compensated && it.pred_missing) acc = 0.25;
    if (it.difficulty == "easy") easy += 1, easy_acc += acc;
    else hard += 1, hard_acc += acc;
    if (it.length == "short") short_ += 1, short_acc += acc;
    else if (it.length == "medium") medium += 1, medium_acc += acc;
    else long_ += 1, long_acc += acc;
  }
  auto pct = [](double acc, double n) -> std::optional<double> {
    if (n == 0) return std::nullopt;
    return python_round(100 * acc / n, 1);
  };
  LongBenchV2Accuracy out;
  out.overall = pct(easy_acc + hard_acc, static_cast<double>(items.size()));
  out.easy = pct(easy_acc, easy), out.hard = pct(hard_acc, hard);
  out.short_ = pct(short_acc, short_), out.medium = pct(medium_acc, medium), out.long_ = pct(long_acc, long_);
  return out;
}

bool longbench_v2_kvpress_correct(const std::string& response, const std::string& answer) {
  const std::string r = python_replace(response, "*", "");
  return r.find(kLead + "(" + answer + ")") != std::string::npos || r.find(kLead + answer) != std::string::npos;
}

}  // namespace kvbench::metrics
