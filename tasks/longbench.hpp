#pragma once
// LongBench (THUDM/LongBench @2e00731, LongBench/pred.py + eval.py), the 16 English subsets:
// prompt templates and generation lengths from config/dataset2prompt.json and dataset2maxlen.json
// (read at run time from <data root>/longbench_ref/), middle truncation of the tokenised prompt,
// the chat template for chat models except on trec/triviaqa/samsum/lsht/lcc/repobench-p, greedy
// decoding, and eval.py's per-dataset metric and rounding.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "datasets/jsonl_reader.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::tasks::longbench {

// The 16 English subsets of LongBench, in pred.py's order.
const std::vector<std::string>& english_subsets();
bool is_english_subset(const std::string& subset);

// pred.py: "chat models are better off without build prompts on these tasks".
bool uses_chat_template(const std::string& subset);

// LongBench's task categories (README), for the category averages.
const std::vector<std::pair<std::string, std::vector<std::string>>>& categories();

// Python str.format(**record) for the templates' {name} fields ("{{" and "}}" are literal braces).
// Fields must be strings; anything else is a DataError at the record.
std::string format_prompt(const std::string& prompt_template, const datasets::JsonRecord& record);

struct PreparedPrompt {
  std::string text;             // what is tokenised (with BOS) and fed to the model
  int64_t original_tokens = 0;  // tokens of the formatted prompt before truncation (BOS included)
  bool truncated = false;
};

// The prompt pred.py feeds the model: format, truncate the middle to max_length tokens, then the
// chat template unless the subset is excluded.
PreparedPrompt prepare_prompt(const models::Tokenizer& tokenizer, const std::string& subset,
                              const std::string& prompt_template, const datasets::JsonRecord& record,
                              int64_t max_length, const std::string& chat_template);

// The default max_length: the model's context minus the subset's generation length minus the tokens
// the chat template adds, so prompt + generation fit the trained window (the purpose of pred.py's
// model2maxlen.json, e.g. 3500 for llama2-7b-chat-4k). Throws if nothing is left for the prompt.
int64_t default_max_length(const models::Tokenizer& tokenizer, int64_t context, int64_t max_new_tokens,
                           const std::string& chat_template, const std::string& subset);

}  // namespace kvbench::tasks::longbench
