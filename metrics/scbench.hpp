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

// RepoQA's scorer (repo_qa_utils.py, after evalplus/repoqa): the answer's function — the first
// ``` block of the stripped output (the code's tree-sitter pass, which would take the first function
// definition inside the block, is not run: kvbench has no tree-sitter), else the whole output — is
// compared by BLEU (whitespace tokens, nltk's method4 smoothing) with every function of the
// repository's turns; it passes when the most similar (strictly more, the first on ties) is the
// gold's and the similarity is at least `threshold` (compute_scores.py reports 0.8).
struct RepoqaNeedle {
  std::string name, code;
};
struct RepoqaVerdict {
  std::string best_name;  // "" when no needle is more similar than 0
  double best_similarity = 0;
  bool pass = false;
};
std::string repoqa_sanitize(const std::string& output);
double repoqa_similarity(const std::string& candidate, const std::string& reference);
RepoqaVerdict repoqa_evaluate(const std::string& output, const std::string& gold_name, const std::vector<RepoqaNeedle>& needles,
                              double threshold = 0.8);
// Throws std::invalid_argument for an unknown scorer or a label of a type the official code rejects.
double scbench_score_one(const std::string& scorer, const std::string& prediction, const nlohmann::json& label);

}  // namespace kvbench::metrics
