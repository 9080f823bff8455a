#pragma once
// LongBench-v2 pred.py's prompt: the template's $DOC$, $Q$, $C_A$ .. $C_D$ replaced in that order
// (a chain of str.replace, so a marker inside an earlier value is replaced too), each value
// stripped; the cot_ans template's $COT$ last.
#include <nlohmann/json.hpp>

#include <string>

namespace kvbench::tasks {

// `context` is the item's context, or the retrieved chunks under rag. Throws std::invalid_argument
// naming `where` and the field when one is missing or not a string.
std::string longbench_v2_prompt(const std::string& template_text, const nlohmann::json& item, const std::string& context,
                                const std::string& where);

}  // namespace kvbench::tasks
