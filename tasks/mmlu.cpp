#include "tasks/mmlu.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace kvbench::tasks::mmlu {
namespace {

// hendrycks/test categories.py `subcategories`.
const std::map<std::string, std::string>& subcategory() {
  static const std::map<std::string, std::string> table = {
      {"abstract_algebra", "math"}, {"anatomy", "health"}, {"astronomy", "physics"},
      {"business_ethics", "business"}, {"clinical_knowledge", "health"}, {"college_biology", "biology"},
      {"college_chemistry", "chemistry"}, {"college_computer_science", "computer science"},
      {"college_mathematics", "math"}, {"college_medicine", "health"}, {"college_physics", "physics"},
      {"computer_security", "computer science"}, {"conceptual_physics", "physics"}, {"econometrics", "economics"},
      {"electrical_engineering", "engineering"}, {"elementary_mathematics", "math"}, {"formal_logic", "philosophy"},
      {"global_facts", "other"}, {"high_school_biology", "biology"}, {"high_school_chemistry", "chemistry"},
      {"high_school_computer_science", "computer science"}, {"high_school_european_history", "history"},
      {"high_school_geography", "geography"}, {"high_school_government_and_politics", "politics"},
      {"high_school_macroeconomics", "economics"}, {"high_school_mathematics", "math"},
      {"high_school_microeconomics", "economics"}, {"high_school_physics", "physics"},
      {"high_school_psychology", "psychology"}, {"high_school_statistics", "math"},
      {"high_school_us_history", "history"}, {"high_school_world_history", "history"}, {"human_aging", "health"},
      {"human_sexuality", "culture"}, {"international_law", "law"}, {"jurisprudence", "law"},
      {"logical_fallacies", "philosophy"}, {"machine_learning", "computer science"}, {"management", "business"},
      {"marketing", "business"}, {"medical_genetics", "health"}, {"miscellaneous", "other"},
      {"moral_disputes", "philosophy"}, {"moral_scenarios", "philosophy"}, {"nutrition", "health"},
      {"philosophy", "philosophy"}, {"prehistory", "history"}, {"professional_accounting", "other"},
      {"professional_law", "law"}, {"professional_medicine", "health"}, {"professional_psychology", "psychology"},
      {"public_relations", "politics"}, {"security_studies", "politics"}, {"sociology", "culture"},
      {"us_foreign_policy", "politics"}, {"virology", "health"}, {"world_religions", "philosophy"}};
  return table;
}

const char* kLetters[4] = {"A", "B", "C", "D"};

}  // namespace

const std::vector<std::string>& subjects() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v;
    for (const auto& [s, _] : subcategory()) v.push_back(s);
    return v;
  }();
  return all;
}

bool is_subject(const std::string& s) { return subcategory().count(s) > 0; }

std::string category_of(const std::string& subject) {
  auto it = subcategory().find(subject);
  if (it == subcategory().end()) throw std::invalid_argument("unknown MMLU subject '" + subject + "'");
  const std::string& sub = it->second;
  for (const char* s : {"physics", "chemistry", "biology", "computer science", "math", "engineering"})
    if (sub == s) return "STEM";
  for (const char* s : {"history", "philosophy", "law"})
    if (sub == s) return "humanities";
  for (const char* s : {"politics", "culture", "economics", "geography", "psychology"})
    if (sub == s) return "social sciences";
  return "other";
}

std::vector<std::string> stem_subjects() {
  std::vector<std::string> out;
  for (const auto& s : subjects())
    if (category_of(s) == "STEM") out.push_back(s);
  return out;
}

std::vector<std::string> stem_subjects_cascade() {
  std::vector<std::string> out = stem_subjects();
  out.push_back("anatomy");
  std::sort(out.begin(), out.end());
  return out;
}

std::string format_subject(const std::string& subject) {
  std::string s;
  size_t start = 0;
  while (true) {
    const size_t us = subject.find('_', start);
    s += " " + subject.substr(start, us == std::string::npos ? std::string::npos : us - start);
    if (us == std::string::npos) break;
    start = us + 1;
  }
  return s;
}

std::string hendrycks_example(const datasets::MmluQuestion& q, bool include_answer) {
  std::string p = q.question;
  for (int j = 0; j < 4; ++j) p += std::string("\n") + kLetters[j] + ". " + q.choices[j];
  p += "\nAnswer:";
  if (include_answer) p += std::string(" ") + kLetters[q.answer] + "\n\n";
  return p;
}

std::string hendrycks_prompt(const std::string& subject, const std::vector<datasets::MmluQuestion>& shots, size_t k,
                             const datasets::MmluQuestion& question) {
  std::string p = "The following are multiple choice questions (with answers) about " + format_subject(subject) + ".\n\n";
  for (size_t i = 0; i < k && i < shots.size(); ++i) p += hendrycks_example(shots[i], true);
  return p + hendrycks_example(question, false);
}

std::string cascade_block(const datasets::MmluQuestion& q, size_t number, const std::string& subject, bool target) {
  std::string p = target ? "> I want you to answer the following multiple choice question about " + subject + ".\n\n"
                         : "> The following are multiple choice questions (with answers) about " + subject + ".\n\n";
  p += std::to_string(number) + ". " + q.question + "\n\n";
  for (int j = 0; j < 4; ++j) p += std::string(kLetters[j]) + ". " + q.choices[j] + (j < 3 ? "\n" : "\n\nAnswer:");
  if (!target) p += kLetters[q.answer];
  return p;
}

std::string cascade_current_block(const datasets::MmluQuestion& q, size_t number, const std::string& subject, bool target) {
  std::string p = target ? "I want you to answer the following multiple choice question about " + subject + ".\n\n" : "";
  p += std::to_string(number) + ". " + q.question + "\n\n";
  for (int j = 0; j < 4; ++j) p += std::string(kLetters[j]) + ". " + q.choices[j] + (j < 3 ? "\n" : "\n\nAnswer:");
  if (!target) p += kLetters[q.answer];
  return p;
}

std::string cascade_current_prompt(const std::string& subject, const std::vector<datasets::MmluQuestion>& shots, size_t k,
                                   const datasets::MmluQuestion& question) {
  const size_t n = std::min(k, shots.size());
  std::string joined;
  for (size_t i = 0; i < n; ++i) joined += (i ? "\n\n" : "") + cascade_current_block(shots[i], i + 1, subject, false);
  return "The following are multiple choice questions (with answers) about " + subject + ":\n\n" + joined + "\n\n" +
         cascade_current_block(question, n + 1, subject, true);
}

std::string cascade_prompt(const std::string& subject, const std::vector<datasets::MmluQuestion>& shots, size_t k,
                           const datasets::MmluQuestion& question) {
  std::string p;
  const size_t n = std::min(k, shots.size());
  for (size_t i = 0; i < n; ++i) p += cascade_block(shots[i], i + 1, subject, false) + "\n\n";
  return p + cascade_block(question, n + 1, subject, true);
}

}  // namespace kvbench::tasks::mmlu
