#pragma once
// SCBench's scorers (microsoft/MInference @ fb56c917 scbench/compute_scores.py get_score_one), on
// the labels its get_ground_truth hands them: kv_retrieval (the label a case-sensitive substring),
// scbench_vt (string_match_all, rounded to 2 decimals), passkey (the first run of digits equals the
// label), math_find (the first number, int(float(·)) for an int label), longdialogue_qa_eng (any
// item of the label, upper-cased, inside the stripped upper-cased prediction; a str label's items
// are its characters, as Python iterates it), and InfiniteBench's longbook_choice_eng,
// longbook_qa_chn (a str label: per character, as compute_scores hands it) and longbook_sum_eng
// (rougeLsum F), which SCBench copies unchanged (metrics/infinitebench.hpp).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kvbench::metrics {

const std::vector<std::string>& scbench_scorers();
// Throws std::invalid_argument for an unknown scorer or a label of a type the official code rejects.
double scbench_score_one(const std::string& scorer, const std::string& prediction, const nlohmann::json& label);

}  // namespace kvbench::metrics
