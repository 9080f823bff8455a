#include <algorithm>

#include "base/known_fields.hpp"
#include "datasets/jsonl_reader.hpp"
#include "harness/score_metrics.hpp"
#include "metrics/python_str.hpp"

namespace kvbench::harness {
namespace {

using nlohmann::json;

// A field that must be an array of strings (non-empty when required_non_empty).
// `numbers_as_python_str`: numbers are accepted and turned into Python's str() of them, for
// scorers whose reference compares str(ground_truth) (LongBench count_score: "references": [21]).
std::vector<std::string> string_array(const json& obj, const char* field, bool required_non_empty,
                                      const std::string& where, bool numbers_as_python_str = false) {
  if (!obj.contains(field)) throw std::invalid_argument(where + "missing field \"" + field + "\"");
  const json& v = obj.at(field);
  const std::string want = std::string("field \"") + field + "\" must be " +
                           (required_non_empty ? "a non-empty array of strings" : "an array of strings");
  if (!v.is_array() || (required_non_empty && v.empty())) throw std::invalid_argument(where + want);
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (numbers_as_python_str && v[i].is_number()) {
      out.push_back(v[i].is_number_float() ? metrics::python_float_str(v[i].get<double>())
                    : v[i].is_number_unsigned() ? std::to_string(v[i].get<uint64_t>())
                                                : metrics::python_int_str(v[i].get<int64_t>()));
      continue;
    }
    if (!v[i].is_string())
      throw std::invalid_argument(where + want + " (element " + std::to_string(i) + " is " + v[i].type_name() + ")");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

// The fields a line may hold: those the scorer reads, plus "id", a label that never changes a
// score. Anything else is refused: a field the scorer would silently ignore (a per-line "dataset"
// for the first-line rule, "all_classes" for a metric without classes) is a wrong number.
std::vector<std::string> score_fields(const MetricScorer& scorer) {
  if (scorer.input() == ScoreInput::Sentences) return {"sentences", "id"};
  std::vector<std::string> fields = {"prediction", "references"};
  if (scorer.needs_all_classes()) fields.push_back("all_classes");
  fields.push_back("id");
  return fields;
}

}  // namespace

std::vector<ScoreExample> read_score_examples(const std::string& path, const MetricScorer& scorer) {
  std::vector<ScoreExample> examples;
  // The shared reader frames the lines (blank lines, CRLF, invalid JSON, non-objects, .gz); the
  // fields and their messages are the score command's own.
  datasets::for_each_jsonl(path, [&](const datasets::JsonRecord& record) {
    const json& obj = record.value;
    const std::string where = path + ":" + std::to_string(record.line) + ": ";
    ScoreExample ex;
    ex.line = static_cast<size_t>(record.line);
    if (scorer.input() == ScoreInput::Sentences) {
      ex.sentences = string_array(obj, "sentences", true, where);
    } else {
      if (!obj.contains("prediction")) throw std::invalid_argument(where + "missing field \"prediction\"");
      if (!obj.at("prediction").is_string())
        throw std::invalid_argument(where + "field \"prediction\" must be a string, got " +
                                    obj.at("prediction").type_name());
      ex.prediction = obj.at("prediction").get<std::string>();
      ex.references = string_array(obj, "references", true, where, scorer.accepts_number_references());
      if (scorer.needs_all_classes()) ex.all_classes = string_array(obj, "all_classes", false, where);
    }
    // After the fields read: "missing" says more.
    base::require_known_fields(obj, score_fields(scorer), path + ":" + std::to_string(record.line));
    examples.push_back(std::move(ex));
    return true;
  });
  if (examples.empty()) throw std::invalid_argument(path + ": no examples (the file has no non-blank line)");
  return examples;
}

}  // namespace kvbench::harness
