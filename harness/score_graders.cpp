#include "harness/score_graders.hpp"

#include "metrics/aggregate.hpp"
#include "tasks/scored_mean.hpp"

namespace kvbench::harness {

namespace {

using nlohmann::json;

// Per example: the answer extracted and whether it is correct against any reference (the
// extraction does not depend on the reference); the aggregate is the accuracy.
class AnswerGraderScorer : public MetricScorer {
 public:
  AnswerGraderScorer(const metrics::AnswerGrader& grader, json params) : grader_(grader), params_(std::move(params)) {}
  bool needs_all_classes() const override { return grader_.reads_choices; }
  json params() const override { return params_; }
  json score(const std::vector<ScoreExample>& examples, bool per_example) const override {
    std::vector<double> correct;
    json per = json::array();
    for (const ScoreExample& ex : examples) {
      metrics::AnswerGrade best;
      for (const std::string& gold : ex.references) {
        best = grader_.grade(ex.prediction, gold, ex.all_classes);
        if (best.correct) break;
      }
      correct.push_back(best.correct ? 1.0 : 0.0);
      if (per_example) per.push_back({{"extracted", best.extracted ? json(*best.extracted) : json(nullptr)}, {"correct", best.correct}});
    }
    json out = {{"aggregate", {{"accuracy", tasks::mean_or_null(metrics::python_sum(correct), static_cast<int64_t>(correct.size()))},
                               {"grader", grader_.name}, {"source", grader_.source}}}};
    if (per_example) out["per_example"] = per;
    return out;
  }

 private:
  const metrics::AnswerGrader& grader_;
  json params_;
};

}  // namespace

std::unique_ptr<MetricScorer> answer_grader_scorer(const metrics::AnswerGrader& grader, MetricParams& params) {
  params.finish({});
  return std::make_unique<AnswerGraderScorer>(grader, params.resolved());
}

}  // namespace kvbench::harness
