#include "harness/score_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "harness/metric_params.hpp"
#include "harness/score_graders.hpp"
#include "metrics/aggregate.hpp"
#include "metrics/bleu.hpp"
#include "metrics/longbench_metrics.hpp"
#include "metrics/longbench_v2.hpp"
#include "metrics/meteor.hpp"
#include "metrics/python_str.hpp"
#include "metrics/qa.hpp"
#include "metrics/rouge_pltrdy.hpp"
#include "metrics/rouge_score.hpp"
#include "metrics/ruler_metrics.hpp"
#include "metrics/self_bleu.hpp"
#include "metrics/unicode.hpp"
#include "tasks/scored_mean.hpp"

namespace kvbench::harness {
namespace {

using nlohmann::json;

// Runs `fn` for one example, turning an exception into one naming the example's line.
template <typename Fn>
auto at_line(const ScoreExample& ex, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const ScoreLineError&) {
    throw;
  } catch (const std::exception& e) {
    throw ScoreLineError(ex.line, e.what());
  }
}

// The mean, or null over zero values: a metric over zero examples has no value, never 0.0.
json mean(const std::vector<double>& v) {
  return tasks::mean_or_null(metrics::python_sum(v), static_cast<int64_t>(v.size()));
}

json rouge_json(const metrics::RougeScore& s) {
  return {{"precision", s.precision}, {"recall", s.recall}, {"fmeasure", s.fmeasure}};
}

json pltrdy_json(const metrics::PltrdyPRF& s) { return {{"r", s.r}, {"p", s.p}, {"f", s.f}}; }

// A metric with one number per example: the aggregate is its mean.
class SingleNumberScorer : public MetricScorer {
 public:
  using Fn = std::function<double(const ScoreExample&)>;
  SingleNumberScorer(std::string field, Fn fn, json params = json::object())
      : field_(std::move(field)), fn_(std::move(fn)), params_(std::move(params)) {}
  json params() const override { return params_; }
  json score(const std::vector<ScoreExample>& examples, bool per_example) const override {
    std::vector<double> values;
    json per = json::array();
    for (const auto& ex : examples) {
      values.push_back(at_line(ex, [&] { return fn_(ex); }));
      if (per_example) per.push_back({{field_, values.back()}});
    }
    json out = {{"aggregate", {{field_, mean(values)}}}};
    if (per_example) out["per_example"] = per;
    return out;
  }

 private:
  std::string field_;
  Fn fn_;
  json params_;
};

class RougeMetric : public MetricScorer {
 public:
  explicit RougeMetric(MetricParams& p) : scorer_({"rouge1", "rouge2", "rougeL", "rougeLsum"}, p.boolean("stemmer", false)) {
    p.finish({"stemmer"});
    params_ = p.resolved();
  }
  json params() const override { return params_; }
  json score(const std::vector<ScoreExample>& examples, bool per_example) const override {
    std::vector<std::map<std::string, metrics::RougeScore>> all;
    json per = json::array();
    for (const auto& ex : examples) {
      all.push_back(at_line(ex, [&] { return scorer_.score_multi(ex.references, ex.prediction); }));
      if (per_example) {
        json o = json::object();
        for (const auto& [type, s] : all.back()) o[type] = rouge_json(s);
        per.push_back(o);
      }
    }
    json agg = json::object();
    for (const auto& [type, s] : metrics::rouge_mean(all)) agg[type] = rouge_json(s);
    json out = {{"aggregate", agg}};
    if (per_example) out["per_example"] = per;
    return out;
  }

 private:
  metrics::RougeScorer scorer_;
  json params_;
};

// pltrdy has no multi-reference mode: with several references the example reports the one
// with the largest rouge-l f (the first on a tie), as LongBench's max over ground truths does,
// plus its "reference_index". An example whose every reference raises reports the first error.
class PltrdyMetric : public MetricScorer {
 public:
  explicit PltrdyMetric(MetricParams& p) {
    p.finish({});
    params_ = p.resolved();
  }
  json params() const override { return params_; }
  json score(const std::vector<ScoreExample>& examples, bool per_example) const override {
    std::vector<double> sums(9, 0.0);
    std::vector<std::vector<double>> columns(9);
    int64_t errors = 0;
    std::string first_failure;  // "line N: <error>" of the first example with no score
    json per = json::array();
    for (const auto& ex : examples) {
      std::optional<metrics::PltrdyScores> best;
      size_t best_index = 0;
      std::string first_error;
      for (size_t j = 0; j < ex.references.size(); ++j) {
        try {
          metrics::PltrdyScores s = metrics::pltrdy_rouge(ex.prediction, ex.references[j]);
          if (!best || s.rougel.f > best->rougel.f) {
            best = s;
            best_index = j;
          }
        } catch (const metrics::PltrdyError& e) {
          if (first_error.empty()) first_error = e.what();
        } catch (const std::exception& e) {
          // The reference's own errors above are per-example results; anything else (a stated
          // bound of kvbench) fails the command, naming the line.
          throw ScoreLineError(ex.line, e.what());
        }
      }
      if (!best) {
        ++errors;
        if (first_failure.empty()) first_failure = "line " + std::to_string(ex.line) + ": " + first_error;
        if (per_example) per.push_back({{"error", first_error}});
        continue;
      }
      const metrics::PltrdyPRF* parts[3] = {&best->rouge1, &best->rouge2, &best->rougel};
      for (int k = 0; k < 3; ++k) {
        columns[3 * k].push_back(parts[k]->r);
        columns[3 * k + 1].push_back(parts[k]->p);
        columns[3 * k + 2].push_back(parts[k]->f);
      }
      if (per_example) {
        json o = {{"rouge-1", pltrdy_json(best->rouge1)}, {"rouge-2", pltrdy_json(best->rouge2)},
                  {"rouge-l", pltrdy_json(best->rougel)}};
        if (ex.references.size() > 1) o["reference_index"] = best_index;
        per.push_back(o);
      }
    }
    json agg = json::object();
    const char* names[3] = {"rouge-1", "rouge-2", "rouge-l"};
    for (int k = 0; k < 3; ++k)
      agg[names[k]] = {{"r", mean(columns[3 * k])}, {"p", mean(columns[3 * k + 1])}, {"f", mean(columns[3 * k + 2])}};
    agg["scored"] = static_cast<int64_t>(columns[0].size());
    agg["errors"] = errors;
    json out = {{"aggregate", agg}};
    if (per_example) out["per_example"] = per;
    if (columns[0].empty())
      out["failure"] = "rouge_pltrdy: no example was scored (errors = " + std::to_string(errors) + ", the first at " +
                       first_failure + "); a metric over zero examples has no value";
    return out;
  }

 private:
  json params_;
};

json bleu_json(const metrics::BleuScore& s) {
  return {{"score", s.score},     {"precisions", s.precisions}, {"bp", s.bp},        {"sys_len", s.sys_len},
          {"ref_len", s.ref_len}, {"counts", s.counts},         {"totals", s.totals}};
}

// sacreBLEU: level=sentence is sacrebleu.sentence_bleu per example (effective order on) with
// the mean as aggregate; level=corpus is BLEU().corpus_score over the whole file.
class BleuMetric : public MetricScorer {
 public:
  explicit BleuMetric(MetricParams& p) {
    level_ = p.choice("level", "sentence", {"sentence", "corpus"});
    options_ = level_ == "sentence" ? metrics::BleuOptions::sentence() : metrics::BleuOptions();
    options_.tokenize = p.choice("tokenize", "13a", {"13a", "intl", "none"});
    options_.lowercase = p.boolean("lowercase", false);
    options_.smooth_method = p.choice("smooth_method", "exp", {"exp", "floor", "add-k", "none"});
    options_.smooth_value = p.number_in("smooth_value", 0, std::numeric_limits<double>::infinity());
    // sacreBLEU ignores smooth_value for exp and none; a value given there is a mistake, not a no-op.
    if (options_.smooth_value && options_.smooth_method != "floor" && options_.smooth_method != "add-k")
      throw std::invalid_argument("bleu: parameter smooth_value is used only by smooth_method floor and add-k (not " +
                                  options_.smooth_method + ")");
    options_.effective_order = p.boolean("effective_order", options_.effective_order);
    options_.max_ngram_order = p.integer("max_ngram_order", 4, 1, 255);
    p.finish({"level", "tokenize", "lowercase", "smooth_method", "smooth_value", "effective_order", "max_ngram_order"});
    options_.validate();
    params_ = p.resolved();
  }
  json params() const override { return params_; }
  json score(const std::vector<ScoreExample>& examples, bool per_example) const override {
    std::vector<std::vector<std::string>> refs;
    for (const auto& ex : examples) refs.push_back(ex.references);
    const std::string signature = metrics::bleu_signature(options_, metrics::bleu_nrefs(refs));
    if (level_ == "corpus") {
      if (per_example)
        throw std::invalid_argument("bleu: level=corpus scores the whole file as one corpus and has no per-example "
                                    "scores (use level=sentence for those)");
      std::vector<std::string> hyps;
      for (const auto& ex : examples) hyps.push_back(ex.prediction);
      json agg = bleu_json(metrics::corpus_bleu_segments(hyps, refs, options_));
      agg["signature"] = signature;
      return {{"aggregate", agg}};
    }
    std::vector<double> scores;
    json per = json::array();
    for (const auto& ex : examples) {
      metrics::BleuScore s = at_line(ex, [&] { return metrics::sentence_bleu(ex.prediction, ex.references, options_); });
      scores.push_back(s.score);
      if (per_example) per.push_back(bleu_json(s));
    }
    json out = {{"aggregate", {{"score", mean(scores)}, {"signature", signature}}}};
    if (per_example) out["per_example"] = per;
    return out;
  }

 private:
  std::string level_;
  metrics::BleuOptions options_;
  json params_;
};

class SquadMetric : public MetricScorer {
 public:
  explicit SquadMetric(MetricParams& p) {
    p.finish({});
    params_ = p.resolved();
  }
  json params() const override { return params_; }
  json score(const std::vector<ScoreExample>& examples, bool per_example) const override {
    std::vector<double> em, f1;
    json per = json::array();
    for (const auto& ex : examples) {
      em.push_back(metrics::exact_match(ex.prediction, ex.references));
      f1.push_back(metrics::token_f1(ex.prediction, ex.references));
      if (per_example) per.push_back({{"exact_match", em.back()}, {"f1", f1.back()}});
    }
    json out = {{"aggregate", {{"exact_match", mean(em)}, {"f1", mean(f1)}}}};
    if (per_example) out["per_example"] = per;
    return out;
  }

 private:
  json params_;
};

const std::vector<std::string>& longbench_functions() {
  static const std::vector<std::string> names = {"qa_f1_score",     "rouge_score", "classification_score",
                                                 "retrieval_score", "count_score", "code_sim_score"};
  return names;
}

// LongBench eval.py: per example max(0, metric(prediction, answer) over answers) after the
// first-line rule of `dataset` (when given); aggregate round(100 * total / n, 2) as eval.py's
// scorer, plus the unrounded mean.
class LongBenchMetric : public MetricScorer {
 public:
  LongBenchMetric(std::string function, MetricParams& p) : function_(std::move(function)) {
    const auto& names = longbench_functions();
    if (std::find(names.begin(), names.end(), function_) == names.end())
      throw std::invalid_argument("unknown metric longbench." + function_ +
                                  " (English LongBench metrics: qa_f1_score, rouge_score, classification_score, "
                                  "retrieval_score, count_score, code_sim_score)");
    const auto dataset = p.optional_string("dataset");
    if (dataset) {
      const std::string expected = metrics::lb_metric_for_dataset(*dataset);  // throws for unknown
      if (expected != function_)
        throw std::invalid_argument("longbench." + function_ + ": dataset " + *dataset + " is scored with " + expected);
      first_line_ = metrics::lb_uses_first_line_rule(*dataset);
    }
    backend_ = p.choice("backend", "levenshtein", {"levenshtein", "difflib"}) == "difflib"
                   ? metrics::FuzzBackend::Difflib
                   : metrics::FuzzBackend::Levenshtein;
    p.finish({"dataset", "backend"});
    params_ = p.resolved();
  }
  bool needs_all_classes() const override { return function_ == "classification_score"; }
  // count_score compares str(number) == str(ground_truth): LongBench passage_count answers are ints.
  bool accepts_number_references() const override { return function_ == "count_score"; }
  json params() const override { return params_; }
  json score(const std::vector<ScoreExample>& examples, bool per_example) const override {
    std::vector<double> scores;
    json per = json::array();
    for (const auto& ex : examples) {
      const std::string pred = first_line_ ? metrics::lb_first_line(ex.prediction) : ex.prediction;
      double s = 0.0;
      for (const auto& gt : ex.references)
        s = std::max(s, at_line(ex, [&] { return metrics::lb_metric(function_, pred, gt, ex.all_classes, backend_); }));
      scores.push_back(s);
      if (per_example) per.push_back({{"score", s}});
    }
    const double total = metrics::python_sum(scores);
    const double n = static_cast<double>(scores.size());
    json out = {{"aggregate", {{"score", metrics::python_round(100 * total / n, 2)}, {"mean", total / n}}}};
    if (per_example) out["per_example"] = per;
    return out;
  }

 private:
  std::string function_;
  bool first_line_ = false;
  metrics::FuzzBackend backend_ = metrics::FuzzBackend::Levenshtein;
  json params_;
};

// RULER's string_match_all / string_match_part: per example the function on that one example
// (0-1) after RULER's postprocess_pred (or kvpress's: control characters deleted); the aggregate
// is RULER's task score, round(100 * sum / n, 2), and the unrounded mean.
class RulerMetric : public MetricScorer {
 public:
  RulerMetric(std::string function, MetricParams& p) : function_(std::move(function)) {
    if (function_ != "string_match_all" && function_ != "string_match_part")
      throw std::invalid_argument("unknown metric ruler." + function_ + " (RULER metrics: string_match_all, string_match_part)");
    postprocess_ = p.choice("postprocess", "ruler", {"ruler", "kvpress"}) == "kvpress" ? metrics::RulerPostprocess::kvpress
                                                                                       : metrics::RulerPostprocess::ruler;
    p.finish({"postprocess"});
    params_ = p.resolved();
  }
  json params() const override { return params_; }
  json score(const std::vector<ScoreExample>& examples, bool per_example) const override {
    std::vector<double> values;
    json per = json::array();
    for (const auto& ex : examples) {
      const std::string pred = metrics::ruler_postprocess(ex.prediction, postprocess_);
      values.push_back(at_line(ex, [&] {
        return function_ == "string_match_all" ? metrics::ruler_string_match_all(pred, ex.references)
                                               : metrics::ruler_string_match_part(pred, ex.references);
      }));
      if (per_example) per.push_back({{"score", values.back()}});
    }
    json out = {{"aggregate", {{"score", metrics::ruler_task_score(values)}, {"mean", metrics::python_sum(values) / static_cast<double>(values.size())}}}};
    if (per_example) out["per_example"] = per;
    return out;
  }

 private:
  std::string function_;
  metrics::RulerPostprocess postprocess_ = metrics::RulerPostprocess::ruler;
  json params_;
};

// LongBench-v2: per example 1.0 when extract_answer(prediction.strip()) is the reference letter,
// else 0.0 (pred.py's judge); the aggregate is result.py's overall round(100 x, 1) and the mean.
class LongBenchV2Metric : public MetricScorer {
 public:
  explicit LongBenchV2Metric(MetricParams& p) {
    p.finish({});
    params_ = p.resolved();
  }
  json params() const override { return params_; }
  json score(const std::vector<ScoreExample>& examples, bool per_example) const override {
    std::vector<metrics::LongBenchV2Judged> judged;
    std::vector<double> values;
    json per = json::array();
    for (const auto& ex : examples) {
      if (ex.references.size() != 1) throw ScoreLineError(ex.line, "longbench_v2: references must hold the one answer letter");
      const std::optional<char> pred = metrics::longbench_v2_extract_answer(metrics::python_strip(ex.prediction));
      const bool correct = pred && ex.references[0] == std::string(1, *pred);
      judged.push_back({"easy", "short", correct, !pred});
      values.push_back(correct ? 1.0 : 0.0);
      if (per_example) per.push_back({{"score", values.back()}, {"pred", pred ? json(std::string(1, *pred)) : json(nullptr)}});
    }
    json out = {{"aggregate", {{"overall", *metrics::longbench_v2_accuracy(judged, false).overall}, {"mean", mean(values)}}}};
    if (per_example) out["per_example"] = per;
    return out;
  }

 private:
  json params_;
};

// Self-BLEU per line of sentences; "score" is np.mean over the sentences (BUZZ's number).
class SelfBleuMetric : public MetricScorer {
 public:
  explicit SelfBleuMetric(MetricParams& p) : ngram_(p.integer("ngram", 4, 1, 255)) {
    p.finish({"ngram"});
    params_ = p.resolved();
  }
  ScoreInput input() const override { return ScoreInput::Sentences; }
  json params() const override { return params_; }
  json score(const std::vector<ScoreExample>& examples, bool per_example) const override {
    std::vector<double> scores;
    json per = json::array();
    for (const auto& ex : examples) {
      metrics::SelfBleuResult r = at_line(ex, [&] { return metrics::self_bleu(ex.sentences, ngram_); });
      scores.push_back(r.mean_numpy);
      if (per_example)
        per.push_back({{"score", r.mean_numpy}, {"mean_python", r.mean}, {"per_sentence", r.per_sentence}});
    }
    json out = {{"aggregate", {{"score", mean(scores)}}}};
    if (per_example) out["per_example"] = per;
    return out;
  }

 private:
  int ngram_;
  json params_;
};

// nltk METEOR on whitespace tokens (str.split, as the golden vectors); per example the maximum
// over references.
std::unique_ptr<MetricScorer> meteor_metric(MetricParams& p) {
  metrics::MeteorOptions o;
  // nltk's ranges: fmean = P*R / (alpha*P + (1-alpha)*R) is a weighted harmonic mean only for
  // alpha in [0, 1]; penalty = gamma * (chunks/m)^beta stays in [0, 1] (score in [0, fmean]) only
  // for gamma in [0, 1] and beta >= 0, since chunks/m is in (0, 1].
  const double inf = std::numeric_limits<double>::infinity();
  o.alpha = p.number_in("alpha", 0, 1).value_or(o.alpha);
  o.beta = p.number_in("beta", 0, inf).value_or(o.beta);
  o.gamma = p.number_in("gamma", 0, 1).value_or(o.gamma);
  p.finish({"alpha", "beta", "gamma"});
  json params = p.resolved();
  params["alpha"] = o.alpha;
  params["beta"] = o.beta;
  params["gamma"] = o.gamma;
  return std::make_unique<SingleNumberScorer>(
      "meteor", [o](const ScoreExample& ex) { return metrics::meteor_score(ex.prediction, ex.references, o); }, params);
}

std::unique_ptr<MetricScorer> simple(MetricParams& p, const std::string& field,
                                     std::function<double(const ScoreExample&)> fn) {
  p.finish({});
  return std::make_unique<SingleNumberScorer>(field, std::move(fn), p.resolved());
}

}  // namespace

std::vector<std::string> score_metric_names() {
  std::vector<std::string> names = {"rouge",     "rouge_pltrdy", "bleu",     "meteor",
                                    "squad",     "best_subspan_em", "strict_em", "self_bleu"};
  for (const auto& f : longbench_functions()) names.push_back("longbench." + f);
  names.push_back("longbench_v2");
  names.push_back("ruler.string_match_all");
  names.push_back("ruler.string_match_part");
  for (const auto& grader : metrics::answer_graders()) names.push_back(grader.name);
  return names;
}

std::unique_ptr<MetricScorer> make_metric_scorer(const std::string& name,
                                                 const std::map<std::string, std::string>& params) {
  MetricParams p(name, params);
  if (name == "rouge") return std::make_unique<RougeMetric>(p);
  if (name == "rouge_pltrdy") return std::make_unique<PltrdyMetric>(p);
  if (name == "bleu") return std::make_unique<BleuMetric>(p);
  if (name == "meteor") return meteor_metric(p);
  if (name == "squad") return std::make_unique<SquadMetric>(p);
  if (name == "best_subspan_em")
    return simple(p, "score", [](const ScoreExample& ex) { return metrics::best_subspan_em(ex.prediction, ex.references); });
  if (name == "strict_em")
    return simple(p, "score", [](const ScoreExample& ex) { return metrics::strict_em(ex.prediction, ex.references); });
  if (name == "self_bleu") return std::make_unique<SelfBleuMetric>(p);
  if (name == "longbench_v2") return std::make_unique<LongBenchV2Metric>(p);
  const std::string lb = "longbench.";
  if (name.compare(0, lb.size(), lb) == 0) return std::make_unique<LongBenchMetric>(name.substr(lb.size()), p);
  const std::string ruler = "ruler.";
  if (name.compare(0, ruler.size(), ruler) == 0) return std::make_unique<RulerMetric>(name.substr(ruler.size()), p);
  for (const auto& grader : metrics::answer_graders())
    if (grader.name == name) return answer_grader_scorer(grader, p);
  std::string known;
  for (const auto& n : score_metric_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown metric '" + name + "' (known: " + known + ")");
}

}  // namespace kvbench::harness
