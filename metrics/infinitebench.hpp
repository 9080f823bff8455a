#pragma once
// InfiniteBench's scorers (OpenBMB/InfiniteBench @ 88b3daa6 src/compute_scores.py get_score_one),
// one per task, on the labels as its files hold them (a string, a list, numbers). Each returns the
// example's score (0/1 for the exact-match tasks, F1 or a share otherwise); the task's score is the
// mean. longbook_sum_eng is rouge_score's rougeLsum F (HF evaluate's "rouge", no stemmer).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kvbench::metrics {

const std::vector<std::string>& infinitebench_tasks();

// `model_name`: math_calc drops GPT-4's first number (its prompts make it restate the input).
// Throws std::invalid_argument for an unknown task or a label of a type the official code rejects.
double infinitebench_score_one(const std::string& task, const std::string& prediction, const nlohmann::json& label,
                               const std::string& model_name);

// `label[0] if isinstance(label, list) else label` (an empty list stays itself), as the official
// scorers (InfiniteBench's and SCBench's copy) read a one-answer label.
const nlohmann::json& first_if_list(const nlohmann::json& label);

// Python's `for item in label` where a scorer loops over a label: a list's strings, a str's
// characters (SCBench hands some scorers the bare answer string). std::invalid_argument naming
// `task` for anything else.
std::vector<std::string> label_items(const nlohmann::json& label, const std::string& task);

// kvpress's copy of the scorers (NVIDIA/kvpress evaluation/benchmarks/infinite_bench/
// calculate_metrics.py) on kvpress's labels (a list of strings; the choice tasks' letter alone).
// It differs on longbook_choice_eng (the last standalone letter A-D of a line is read first),
// longdialogue_qa_eng (any label, upper-cased, inside the upper-cased prediction) and kv_retrieval
// (a list label's first element, where the official code looks for the list itself: 0); elsewhere
// it is the official scorer. Where kvpress's code cannot score a task as its dataset hands it the labels
// (code_run compares a string with an int: always 0; code_debug reads label[1] of a one-letter
// list; math_find and math_calc reject the string labels; longbook_sum_eng asserts) this throws
// std::invalid_argument saying so: infinitebench_kvpress_scores() is false there.
bool infinitebench_kvpress_scores(const std::string& task);
double infinitebench_kvpress_score_one(const std::string& task, const std::string& prediction, const nlohmann::json& label);

}  // namespace kvbench::metrics
