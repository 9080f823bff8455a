#pragma once
// GPQA's generative variants as lm-evaluation-harness scores them (lm_eval/tasks/gpqa/
// cot_zeroshot/_gpqa_cot_zeroshot_yaml; cot_n_shot and generative use the same filters):
// strict-match, `(?<=The answer is )(.*)(?=.)` (the rest of that line less its last character);
// flexible-extract, MultiChoiceRegexFilter: the last "(X)", else the last choice text found in
// the output (both lowercased, Unicode punctuation removed) as its letter, else the last ":X";
// "[invalid]" when nothing is found; exact_match with ignore_case and ignore_punctuation
// (string.punctuation) against the gold "(X)".
#include <string>
#include <vector>

namespace kvbench::metrics {

std::string gpqa_strict_answer(const std::string& output);
// choices: the question's choices in the order the prompt lists them (A, B, C, ...).
std::string gpqa_flexible_answer(const std::string& output, const std::vector<std::string>& choices);
bool gpqa_exact_match(const std::string& prediction, const std::string& gold);

}  // namespace kvbench::metrics
