#pragma once
// MMLU (Hendrycks et al. 2021) prompts, subjects and categories.
//
// Two prompt styles:
//  - hendrycks: hendrycks/test evaluate.py. "The following are multiple choice questions (with
//    answers) about{format_subject}.\n\n" (format_subject = " " + words, so "about  abstract
//    algebra." has two spaces, as the reference), then each shot "{q}\nA. {a}\nB. {b}\nC. {c}\nD.
//    {d}\nAnswer: {letter}\n\n", then the question with "\nAnswer:". Shots are the first k rows of
//    the dev file. Answer = the letter with the highest log-likelihood of " A".." D".
//  - cascade: the Cascading KV Cache reference code (jeffwillette/cascading_kv_cache,
//    cascade/main/jobs/mmlu.py), in two formats:
//    current (HEAD 76c89a4): one header "The following are multiple choice questions (with answers)
//    about {subject}:\n\n", the shots "{n}. {q}\n\nA. {a}\nB. ..\nD. {d}\n\nAnswer:{letter}" joined
//    by "\n\n", "\n\n", then "I want you to answer the following multiple choice question about
//    {subject}.\n\n{n}. {q}\n\nA. ..\n\nAnswer:";
//    submission (commit a53e7af "commit at submission", the code behind the paper's Table 2): each
//    shot "> The following are multiple choice questions (with answers) about {subject}.\n\n{n}. {q}\n\nA. {a}\nB. {b}\nC. {c}\nD. {d}\n\nAnswer:{letter}", shots joined by "\n\n", then
//    "> I want you to answer the following multiple choice question about {subject}.\n\n{n}. {q}"
//    "\n\nA. ..\n\nAnswer:" (subject with underscores); shots = dev then validation rows, first 20;
//    answer = argmax over letters of max p(token) over the tokens of 'A', ':A', ': A', ':  A' and
//    their lower-case forms (the last token of each, BOS-prefixed tokenisation). Both eras tokenise
//    with truncation_side='left' at max_position_embeddings (BOS + the last tokens); the current
//    code turns truncation off for its streaming ("sink") method.
#include <string>
#include <vector>

#include "datasets/mmlu_reader.hpp"

namespace kvbench::tasks::mmlu {

const std::vector<std::string>& subjects();  // the 57, alphabetical
bool is_subject(const std::string& s);
// hendrycks/test categories.py: subject -> category ("STEM", "humanities", "social sciences", "other").
std::string category_of(const std::string& subject);
// STEM = subjects whose subcategory is physics, chemistry, biology, computer science, math or
// engineering in categories.py (18 subjects).
std::vector<std::string> stem_subjects();
// The STEM list in the Cascade reference code (commented out there): the 18 plus anatomy.
std::vector<std::string> stem_subjects_cascade();

std::string format_subject(const std::string& subject);  // " abstract algebra"
std::string hendrycks_example(const datasets::MmluQuestion& q, bool include_answer);
std::string hendrycks_prompt(const std::string& subject, const std::vector<datasets::MmluQuestion>& shots, size_t k,
                             const datasets::MmluQuestion& question);

// The submission-era format (a53e7af): a "> The following ..." header on every shot.
std::string cascade_block(const datasets::MmluQuestion& q, size_t number, const std::string& subject, bool target);
std::string cascade_prompt(const std::string& subject, const std::vector<datasets::MmluQuestion>& shots, size_t k,
                           const datasets::MmluQuestion& question);

// The current format (HEAD): one "...about {subject}:" header, unprefixed numbered shots.
std::string cascade_current_block(const datasets::MmluQuestion& q, size_t number, const std::string& subject, bool target);
std::string cascade_current_prompt(const std::string& subject, const std::vector<datasets::MmluQuestion>& shots, size_t k,
                                   const datasets::MmluQuestion& question);

}  // namespace kvbench::tasks::mmlu
