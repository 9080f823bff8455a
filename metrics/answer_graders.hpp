#pragma once
// The named answer graders of the reasoning tasks, each one reference's extraction and
// equivalence: the tasks grade with them and `kvbench score` offers them by name.
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kvbench::metrics {

struct AnswerGrade {
  AnswerGrade() = default;
  AnswerGrade(std::optional<std::string> answer, bool is_correct) : extracted(std::move(answer)), correct(is_correct) {}
  std::optional<std::string> extracted;  // the answer read from the output (nullopt: none found)
  bool correct = false;
  std::optional<std::string> gold_read;  // the gold as the grader read it, where that is not the gold given (a worked solution's answer)
  bool outside_subset = false;           // decided where kvbench's reading of the reference is known to be partial (docs say where)
};

struct AnswerGrader {
  std::string name;     // e.g. "math.boxed_equiv"
  std::string summary;  // extraction and equivalence, in one line
  std::string source;   // the reference code, with its commit
  bool reads_choices = false;   // multiple choice: the grade reads the choices' texts
  bool reads_solution = false;  // the gold is the worked solution (MATH's), whose answer the grader extracts
  // output: the model's completion; gold: the dataset's answer as the reference reads it (the
  // worked solution for a grader that reads_solution); choices: the question's choices in prompt
  // order (multiple choice only).
  std::function<AnswerGrade(const std::string& output, const std::string& gold, const std::vector<std::string>& choices)> grade;
};

// Throws std::invalid_argument for an unknown name, listing the known ones.
const AnswerGrader& answer_grader(const std::string& name);
const std::vector<AnswerGrader>& answer_graders();

}  // namespace kvbench::metrics
