#pragma once
// GSM8K as lm-evaluation-harness scores it (lm_eval/tasks/gsm8k/gsm8k.yaml): two filters on the
// model's output — strict-match, the first "#### <number>" (regex `#### (\-?[0-9\.\,]+)`), and
// flexible-extract, the last number-like run (`(-?[$0-9.,]{2,})|(-?[0-9]+)`, group_select -1) —
// each "[invalid]" when nothing matches, then exact_match against the dataset's answer with
// ignore_case and regexes_to_ignore [",", "\$", "(?s).*#### ", "\.$"] applied to both sides.
#include <string>

namespace kvbench::metrics {

inline constexpr const char* kGsm8kInvalid = "[invalid]";  // lm-eval's RegexFilter fallback

std::string gsm8k_strict_answer(const std::string& output);
std::string gsm8k_flexible_answer(const std::string& output);
// exact_match(prediction, reference) with gsm8k.yaml's options; `reference` is the answer field
// as the dataset has it (the worked solution ending in "#### n").
bool gsm8k_exact_match(const std::string& prediction, const std::string& reference);

}  // namespace kvbench::metrics
