#include "metrics/answer_graders.hpp"

#include <stdexcept>

#include "base/registry.hpp"
#include "metrics/gpqa.hpp"
#include "metrics/gsm8k.hpp"
#include "metrics/hendrycks_math.hpp"
#include "metrics/qwen_math_equal.hpp"

namespace kvbench::metrics {

namespace {

const char* kLmEval = "EleutherAI/lm-evaluation-harness @ 4e7e0d47";

// The last box's content, or nullopt where lm-eval's remove_boxed(last_boxed_only_string(x))
// would get None or raise (an \fbox).
std::optional<std::string> boxed_content(const std::string& text) {
  const std::optional<std::string> box = last_boxed_only_string(text);
  if (!box) return std::nullopt;
  try {
    return remove_boxed(*box);
  } catch (const PythonRaised&) {
    return std::nullopt;
  }
}

AnswerGrade boxed_equiv(const std::string& output, const std::string& gold, const std::vector<std::string>&) {
  AnswerGrade g;
  g.extracted = boxed_content(output);
  g.correct = hendrycks_is_equiv(g.extracted, gold);
  return g;
}

std::optional<std::string> found(const std::string& extracted) {
  return extracted == kGsm8kInvalid ? std::nullopt : std::optional<std::string>(extracted);  // lm-eval's fallback: nothing found
}

// kvpress's AIME25 / MATH500 score (evaluation/benchmarks/aime25/calculate_metrics.py):
// extract_boxed = pred.split("boxed{")[-1].split("}")[0] — the whole output up to its first '}' when
// there is no "boxed{" — compared with str(answer) as text.
AnswerGrade kvpress_boxed(const std::string& output, const std::string& gold, const std::vector<std::string>&) {
  const size_t box = output.rfind("boxed{");
  const std::string after = box == std::string::npos ? output : output.substr(box + 6);
  const std::string extracted = after.substr(0, after.find('}'));
  return {extracted, extracted == gold};
}

// kvpress's MATH500 score: the same with split("boxed{")[1], the first box; no box is None (the
// IndexError it catches), never equal to the gold.
AnswerGrade kvpress_first_boxed(const std::string& output, const std::string& gold, const std::vector<std::string>&) {
  const size_t box = output.find("boxed{");
  if (box == std::string::npos) return {std::nullopt, false};
  const size_t next = output.find("boxed{", box + 6);  // split()[1] ends at the next separator
  const std::string piece = output.substr(box + 6, next == std::string::npos ? std::string::npos : next - box - 6);
  const std::string extracted = piece.substr(0, piece.find('}'));
  return {extracted, extracted == gold};
}

// R-KV's eval_math.py: Qwen2.5-Math's extract_answer + strip_string, math_equal.
AnswerGrade qwen_math_grade(const std::string& output, const std::string& gold, bool gold_is_solution) {
  const qwen_math::Verdict v = qwen_math::grade(output, gold, gold_is_solution);
  AnswerGrade g{v.pred, v.correct};
  if (gold_is_solution) g.gold_read = v.gt;
  g.outside_subset = v.outside_subset;
  return g;
}

AnswerGrade gsm8k_grade(const std::string& extracted, const std::string& gold) { return {found(extracted), gsm8k_exact_match(extracted, gold)}; }
AnswerGrade gpqa_grade(const std::string& extracted, const std::string& gold) { return {found(extracted), gpqa_exact_match(extracted, gold)}; }

base::Registry<AnswerGrader> make_graders() {
  base::Registry<AnswerGrader> registry("answer grader");
  const std::string rkv = "Zefan-Cai/R-KV @ d15c9767 evaluation/ (Qwen2.5-Math's parser.py extract_answer/strip_string, grader.py math_equal)";
  for (AnswerGrader& g : std::vector<AnswerGrader>{
      {"qwen_math.answer", "Qwen2.5-Math's extract_answer (the last \\boxed{}, 'the answer is', else the last number) and math_equal "
       "(text, numbers within 1e-4, tuples, matrices, sympy-equal expressions) against the gold answer, strip_string'ed (R-KV's gsm8k, aime24)",
       rkv, false, false, [](const std::string& output, const std::string& gold, const std::vector<std::string>&) { return qwen_math_grade(output, gold, false); }},
      {"qwen_math.solution", "as qwen_math.answer, the gold read from a worked solution's last \\boxed{} (R-KV's math: MATH-500)",
       rkv, false, true, [](const std::string& output, const std::string& gold, const std::vector<std::string>&) { return qwen_math_grade(output, gold, true); }},
      {"math.boxed_equiv", "the last \\boxed{} / \\fbox{} by balanced braces, its content, hendrycks is_equiv (strip_string, then text equality)",
       std::string(kLmEval) + " lm_eval/tasks/hendrycks_math/utils.py", false, false, boxed_equiv},
      {"kvpress.boxed", "the text after the last 'boxed{' up to the next '}' (the output up to its first '}' without one), equal to the gold as text",
       "NVIDIA/kvpress @ 8bb29b9c evaluation/benchmarks/aime25/calculate_metrics.py", false, false, kvpress_boxed},
      {"kvpress.first_boxed", "the text after the first 'boxed{' up to the next '}' (none without one), equal to the gold as text",
       "NVIDIA/kvpress @ 8bb29b9c evaluation/benchmarks/math500/calculate_metrics.py", false, false, kvpress_first_boxed},
      {"gsm8k.strict", "the first '#### <number>', lm-eval exact_match (case, ',', '$', a final '.' ignored; the gold's '... #### ' dropped)",
       std::string(kLmEval) + " lm_eval/tasks/gsm8k/gsm8k.yaml strict-match", false, false,
       [](const std::string& output, const std::string& gold, const std::vector<std::string>&) { return gsm8k_grade(gsm8k_strict_answer(output), gold); }},
      {"gsm8k.flexible", "the last number-like run, lm-eval exact_match as gsm8k.strict",
       std::string(kLmEval) + " lm_eval/tasks/gsm8k/gsm8k.yaml flexible-extract", false, false,
       [](const std::string& output, const std::string& gold, const std::vector<std::string>&) { return gsm8k_grade(gsm8k_flexible_answer(output), gold); }},
      {"gpqa.strict", "the rest of the line after 'The answer is ' less its last character, exact_match ignoring case and ASCII punctuation",
       std::string(kLmEval) + " lm_eval/tasks/gpqa/cot_zeroshot strict-match", false, false,
       [](const std::string& output, const std::string& gold, const std::vector<std::string>&) { return gpqa_grade(gpqa_strict_answer(output), gold); }},
      {"gpqa.flexible", "the last '(X)', else the last choice text in the output, else the last ':X'; exact_match as gpqa.strict",
       std::string(kLmEval) + " lm_eval/tasks/gpqa/cot_zeroshot flexible-extract", true, false,
       [](const std::string& output, const std::string& gold, const std::vector<std::string>& choices) {
         return gpqa_grade(gpqa_flexible_answer(output, choices), gold);
       }},
       }) registry.add(std::move(g));
  return registry;
}

const base::Registry<AnswerGrader>& registry() {
  static const base::Registry<AnswerGrader> graders = make_graders();
  return graders;
}

}  // namespace

const std::vector<AnswerGrader>& answer_graders() { return registry().all(); }

const AnswerGrader& answer_grader(const std::string& name) { return registry().at(name); }

}  // namespace kvbench::metrics
