#pragma once
// SCBench's prompts as its official code builds them (microsoft/MInference @ fb56c917 scbench/
// eval_utils.py): each task's templates as data, its records read from the released JSONL, the
// multi-turn prompts (create_multiturn_prompt: gold history or the model's own, with or without the
// model's chat template) and the multi-request ones (create_scdq_prompt).
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "datasets/jsonl_reader.hpp"
#include "models/model_chat_template.hpp"

namespace kvbench::tasks::scbench {

// One task as its reference declares it. Templates are str.format strings over context, input,
// question (= input), OPTION_A..D, prefix and pre_ans (the previous turn's gold answer).
struct ScbenchSet {
  std::string name, summary;
  std::string first;         // multiturn_templates
  std::string follow_up;     // multiturn_follow_up_templates (gold history, no chat template)
  std::string question;      // multiturn_follow_up_templates_in_chat_tempate: a turn's own text
  std::string context_only;  // multiturn_templates_scdq: the shared context of multi_request
  // DATA_NAME_TO_MAX_NEW_TOKENS and the scorer, per turn tag of the mixed tasks ("" for the others).
  std::map<std::string, std::pair<int64_t, std::string>> per_tag;
  std::string label;  // how get_ground_truth hands the answer: "raw", "list" ([answer]), "choice"
};

const std::vector<ScbenchSet>& sets();

struct Turn {
  std::string input, tag;
  nlohmann::json answer;
  std::vector<std::string> options;
  std::string function;  // repoqa turns: the name of the function asked for
};

struct Record {
  datasets::JsonRecord source;
  std::string context;
  std::vector<Turn> turns;
  std::string repo, lang;  // repoqa: the repository and its language
};

// One released record, its first `max_turns` turns; a DataError naming the field otherwise.
Record read_record(const datasets::JsonRecord& r, const ScbenchSet& set, int64_t max_turns);
// get_ground_truth: the label the scorer receives.
nlohmann::json label_of(const ScbenchSet& set, const Turn& t);
// Python's str() of an answer as str.format pastes it (a list as its repr).
std::string python_str(const nlohmann::json& value, bool inside = false);
// create_multiturn_prompt's prompts: the first turn's, then each follow-up's. `chat` null: none.
std::vector<std::string> turn_prompts(const ScbenchSet& set, const Record& r, bool gold, const models::ModelChatTemplate* chat);
// create_scdq_prompt's: the shared context, then each question.
std::vector<std::string> request_prompts(const ScbenchSet& set, const Record& r, const models::ModelChatTemplate* chat);

}  // namespace kvbench::tasks::scbench
