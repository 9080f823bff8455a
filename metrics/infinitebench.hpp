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

}  // namespace kvbench::metrics
