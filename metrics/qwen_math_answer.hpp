#pragma once
// The answer of a generated solution as R-KV reads it: Qwen2.5-Math's evaluation/parser.py,
// vendored by Zefan-Cai/R-KV @ d15c9767 (extract_answer, strip_string and the word2number 1.1 it
// calls), for the data sets that are not multiple choice (gsm8k, math, aime24, ...).
#include <optional>
#include <string>

namespace kvbench::metrics::qwen_math {

// strip_string(string, skip_unit): \dfrac -> \frac, \left/\right, units (the MathQA unit words,
// \text{...} at the end), degrees, dollars, percent, "x=", word numbers, 0.50 -> 0.5, \sqrt3,
// \frac12, a/b -> \frac{a}{b}, spaces.
std::string strip_string(const std::string& text, bool skip_unit = false);

// extract_answer(pred_str, data_name): the minerva "final answer is $...$. I hope" form, else the
// text after the last "boxed" (balanced braces, or up to a '$'), else after "he answer is" /
// "final answer is" / "答案是", else the last number; then strip_string.
std::string extract_answer(const std::string& output);

// word2number's w2n.word_to_num(text) as str(): nullopt where it raises.
std::optional<std::string> word_to_num(const std::string& text);

// grader.py's choice_answer_clean: the last standalone letter A-E of the answer, else the answer
// less its dots. (parser.py's version differs only in splitting at "answer is" / "choice is",
// which never occur in the one character eval_math.main hands it.)
std::string choice_answer_clean(const std::string& pred);

}  // namespace kvbench::metrics::qwen_math
