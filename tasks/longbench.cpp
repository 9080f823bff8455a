#include "tasks/longbench.hpp"

#include <algorithm>
#include <stdexcept>

#include "tasks/chat_template.hpp"
#include "tasks/prompt_truncation.hpp"
#include "tasks/python_str.hpp"

namespace kvbench::tasks::longbench {

const std::vector<std::string>& english_subsets() {
  static const std::vector<std::string> subsets = {
      "narrativeqa", "qasper", "multifieldqa_en", "hotpotqa", "2wikimqa", "musique", "gov_report", "qmsum",
      "multi_news", "trec", "triviaqa", "samsum", "passage_count", "passage_retrieval_en", "lcc", "repobench-p"};
  return subsets;
}

bool is_english_subset(const std::string& subset) {
  const auto& all = english_subsets();
  return std::find(all.begin(), all.end(), subset) != all.end();
}

bool uses_chat_template(const std::string& subset) {
  static const std::vector<std::string> excluded = {"trec", "triviaqa", "samsum", "lsht", "lcc", "repobench-p"};
  return std::find(excluded.begin(), excluded.end(), subset) == excluded.end();
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& categories() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> table = {
      {"single_doc_qa", {"narrativeqa", "qasper", "multifieldqa_en"}},
      {"multi_doc_qa", {"hotpotqa", "2wikimqa", "musique"}},
      {"summarization", {"gov_report", "qmsum", "multi_news"}},
      {"few_shot", {"trec", "triviaqa", "samsum"}},
      {"synthetic", {"passage_count", "passage_retrieval_en"}},
      {"code", {"lcc", "repobench-p"}}};
  return table;
}

std::string format_prompt(const std::string& prompt_template, const datasets::JsonRecord& record) {
  return python_format(prompt_template, [&](const std::string& name) { return record.string_field(name); });
}

PreparedPrompt prepare_prompt(const models::Tokenizer& tokenizer, const std::string& subset,
                              const std::string& prompt_template, const datasets::JsonRecord& record,
                              int64_t max_length, const std::string& chat_template) {
  TruncatedText t = truncate_middle(tokenizer, format_prompt(prompt_template, record), max_length);
  PreparedPrompt p{t.text, t.original_tokens, t.truncated};
  if (uses_chat_template(subset)) p.text = apply_chat_template(chat_template, p.text, tokenizer);
  return p;
}

int64_t default_max_length(const models::Tokenizer& tokenizer, int64_t context, int64_t max_new_tokens,
                           const std::string& chat_template, const std::string& subset) {
  int64_t overhead = 0;
  if (uses_chat_template(subset) && chat_template != "none")
    overhead = static_cast<int64_t>(tokenizer.encode(apply_chat_template(chat_template, "", tokenizer), false).size());
  const int64_t max_length = context - max_new_tokens - overhead;
  if (max_length < 2)
    throw std::invalid_argument("longbench/" + subset + ": the model's context (" + std::to_string(context) +
                                ") leaves no room for a prompt after " + std::to_string(max_new_tokens) +
                                " new tokens and " + std::to_string(overhead) +
                                " chat-template tokens; set task_params.max_length or max_new_tokens");
  return max_length;
}

}  // namespace kvbench::tasks::longbench
