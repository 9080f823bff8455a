// `kvbench score`: scores a JSONL file of predictions with one of the native scorers and prints
// one JSON object (aggregate, and per-example objects with --per-example).
//
//   kvbench score --metric bleu --input preds.jsonl --param tokenize=intl --per-example
//
// Each line: {"prediction": "...", "references": ["...", ...]} (+ "all_classes" for
// longbench.classification_score); for self_bleu {"sentences": ["...", ...]}; any line may also
// hold an "id" label. Any other field is an error, as in tokenize and chat-template input (a
// field the scorer ignored could be one the user expected to count); blank lines are skipped.
// Any problem is one error naming FILE:LINE and the field, as is an example beyond a scorer's
// stated bound (metrics/scorer_limits.hpp, printed by --help).
#include <iostream>
#include <map>
#include <memory>

#include "harness/command.hpp"
#include "harness/score_metrics.hpp"
#include "metrics/scorer_limits.hpp"

namespace kvbench::harness {
namespace {

using nlohmann::json;

struct ScoreArgs {
  std::string metric;
  std::string input;
  std::vector<std::string> params;
  bool per_example = false;
};

std::map<std::string, std::string> parse_params(const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("--param " + item + ": expected key=value");
    const std::string key = item.substr(0, eq);
    if (!out.emplace(key, item.substr(eq + 1)).second)
      throw std::invalid_argument("--param " + key + " given twice");
  }
  return out;
}

int run_score(const ScoreArgs& args) {
  std::unique_ptr<MetricScorer> scorer = make_metric_scorer(args.metric, parse_params(args.params));
  const std::vector<ScoreExample> examples = read_score_examples(args.input, *scorer);
  json result;
  try {
    result = scorer->score(examples, args.per_example);
  } catch (const ScoreLineError& e) {
    throw std::invalid_argument(args.input + ":" + std::to_string(e.line()) + ": " + e.what());
  }
  json out = {{"metric", args.metric},
              {"input", args.input},
              {"params", scorer->params()},
              {"examples", static_cast<int64_t>(examples.size())},
              {"aggregate", result.at("aggregate")}};
  if (args.per_example) out["per_example"] = result.at("per_example");
  std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  // The nulls are printed (with the per-example errors), and the run still fails.
  if (result.contains("failure")) throw std::invalid_argument(result.at("failure").get<std::string>());
  return 0;
}

const CommandRegistration score_registration(
    "score", "Score a JSONL file of predictions with a native metric (sacreBLEU, ROUGE, METEOR, QA, LongBench, Self-BLEU)",
    [](CLI::App& app) {
      auto args = std::make_shared<ScoreArgs>();
      std::string names;
      for (const auto& n : score_metric_names()) names += (names.empty() ? "" : ", ") + n;
      app.add_option("--metric", args->metric, "metric: " + names)->required();
      app.add_option("--input", args->input, "JSONL file: one {\"prediction\", \"references\"} object per line")
          ->required();
      app.add_option("--param", args->params, "metric parameter key=value (repeatable)");
      app.add_flag("--per-example", args->per_example, "also print one object per input line");
      app.footer("Stated bounds (metrics/README.md): the scorers whose work grows with the product of two lengths fail "
                 "with one error naming the line beyond them: rougeL and code_sim_score's Levenshtein " +
                 std::to_string(metrics::kMaxLcsLengthWords) + " bit-parallel LCS word steps (two 200,000-word "
                 "texts take 6.25e8), rougeLsum and pltrdy rouge-l " + std::to_string(metrics::kMaxLcsTableCells) +
                 " LCS table cells summed over sentence pairs, code_sim_score's difflib " +
                 std::to_string(metrics::kMaxDifflibSteps) + " SequenceMatcher steps.");
      return [args] { return run_score(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
