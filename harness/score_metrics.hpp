#pragma once
// The metrics `kvbench score` offers: each one takes `--param key=value` settings, scores the
// examples of a JSONL file, and reports an aggregate plus per-example objects that use the
// reference libraries' own field names.
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvbench::harness {

// One input line. `line` is its 1-based line number in the file (for error messages).
struct ScoreExample {
  size_t line = 0;
  std::string prediction;
  std::vector<std::string> references;
  std::vector<std::string> all_classes;  // LongBench classification only
  std::vector<std::string> sentences;    // self_bleu only
};

// A scorer's failure on one example; the command adds the file name.
class ScoreLineError : public std::invalid_argument {
 public:
  ScoreLineError(size_t line, const std::string& what) : std::invalid_argument(what), line_(line) {}
  size_t line() const { return line_; }

 private:
  size_t line_;
};

enum class ScoreInput {
  PredictionReferences,  // {"prediction": "...", "references": ["...", ...]}
  Sentences,             // {"sentences": ["...", ...]}
};

class MetricScorer {
 public:
  virtual ~MetricScorer() = default;
  virtual ScoreInput input() const { return ScoreInput::PredictionReferences; }
  virtual bool needs_all_classes() const { return false; }
  // Whether "references" may hold numbers (read as Python's str() of them).
  virtual bool accepts_number_references() const { return false; }
  // The parameters as resolved (given values and defaults), echoed in the output.
  virtual nlohmann::json params() const = 0;
  // Scores every example. The result holds "aggregate" and, when per_example is set,
  // "per_example" (one object per example, in input order). An error in one example is thrown
  // as ScoreLineError. When no example could be scored (rouge_pltrdy: every one raised), the
  // aggregate's numbers are null and the result also holds "failure", the message the command
  // fails with after printing the result.
  virtual nlohmann::json score(const std::vector<ScoreExample>& examples, bool per_example) const = 0;
};

// Builds the named metric with its parameters; throws std::invalid_argument for an unknown
// metric, an unknown parameter, or a bad parameter value (naming the accepted ones).
std::unique_ptr<MetricScorer> make_metric_scorer(const std::string& name,
                                                 const std::map<std::string, std::string>& params);

// Reads a JSONL input file for `scorer`: one object per non-blank line with "prediction" (string)
// and "references" (non-empty array of strings), plus "all_classes" when the scorer needs it, or
// "sentences" (non-empty array of strings) for sentence-set metrics, and optionally "id" (a label,
// not read). Any other field is an error: ignored, it could change what the user meant to score.
// Throws std::invalid_argument "FILE:LINE: <what is wrong with which field>" (or
// std::runtime_error when the file cannot be read), and when the file has no example.
std::vector<ScoreExample> read_score_examples(const std::string& path, const MetricScorer& scorer);

// Every metric name, for --help and error messages.
std::vector<std::string> score_metric_names();

}  // namespace kvbench::harness
