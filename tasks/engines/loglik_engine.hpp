#pragma once
// Multiple choice by log-likelihood (lm-eval-harness style): the context goes through the job's
// policy/protocol, then each choice's tokens are scored one decode step at a time against the
// evicted cache. The split between context and continuation is taken on the tokenisation of the
// whole string, as lm-eval does, so sentencepiece merges across the boundary are respected.
#include <string>
#include <vector>

#include "tasks/task.hpp"

namespace kvbench::tasks {

struct ChoiceScore {
  double loglik = 0;        // Σ log p(continuation tokens)
  int64_t tokens = 0;
  bool greedy = false;      // every continuation token is the argmax
};

ChoiceScore score_continuation(const TaskContext& ctx, const std::string& context, const std::string& continuation);

// Index of the best choice by loglik (acc) and by loglik per byte of the choice (acc_norm, lm-eval's
// length normalisation). Ties go to the first choice.
struct ChoiceResult {
  std::vector<ChoiceScore> scores;
  int64_t best = 0;
  int64_t best_normalized = 0;
};
ChoiceResult choose(const TaskContext& ctx, const std::string& context, const std::vector<std::string>& choices);

}  // namespace kvbench::tasks
