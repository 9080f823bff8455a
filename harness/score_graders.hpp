#pragma once
// `kvbench score --metric <grader>`: the reasoning tasks' answer graders (metrics/answer_graders.hpp)
// on a JSONL of predictions and gold answers ("all_classes": the choices, for graders that read them).
#include <memory>

#include "harness/metric_params.hpp"
#include "harness/score_metrics.hpp"
#include "metrics/answer_graders.hpp"

namespace kvbench::harness {

std::unique_ptr<MetricScorer> answer_grader_scorer(const metrics::AnswerGrader& grader, MetricParams& params);

}  // namespace kvbench::harness
