#include "tasks/longbench_pipelines.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "base/string_affixes.hpp"
#include "metrics/python_str.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/prompt_truncation.hpp"

namespace kvbench::tasks::longbench {
namespace {

// How kvpress splits each LongBench template: the question part starts at the last occurrence of
// `question_start` in the template; `answer_prefix` ends it (or, when `prefix_in_input`, ends
// the record's input and is moved out of it).
struct KvpressSplit {
  const char* subset;
  const char* question_start;
  const char* answer_prefix;
  bool prefix_in_input;
};

const KvpressSplit* kvpress_split(const std::string& subset) {
  static const KvpressSplit table[] = {
      {"narrativeqa", "Question: {input}", "Answer:", false},
      {"qasper", "Question: {input}", "Answer:", false},
      {"multifieldqa_en", "Question: {input}", "Answer:", false},
      {"hotpotqa", "Question: {input}", "Answer:", false},
      {"2wikimqa", "Question: {input}", "Answer:", false},
      {"musique", "Question: {input}", "Answer:", false},
      {"gov_report", "Now, write a one-page summary", "Summary:", false},
      {"qmsum", "Query: {input}", "Answer:", false},
      {"multi_news", "Now, write a one-page summary", "Summary:", false},
      {"trec", "{input}", "Type:", true},
      {"triviaqa", "{input}", "Answer:", true},
      {"samsum", "{input}", "Summary:", true},
      {"passage_count", "Please enter the final count", "The final answer is: ", false},
      {"passage_retrieval_en", "{input}", "The answer is: ", false},
      {"lcc", "Next line of code:\n", "Next line of code:\n", false},
      {"repobench-p", "{input}", "Next line of code:\n", false},
  };
  for (const auto& s : table)
    if (subset == s.subset) return &s;
  throw std::invalid_argument("longbench/" + subset + ": no kvpress split for this subset");
}

using base::ends_with;

// Python str.lstrip() for ASCII whitespace (str.isspace also counts \x1c-\x1f).
std::string lstrip(const std::string& s) {
  size_t b = 0;
  while (b < s.size() && (std::isspace(static_cast<unsigned char>(s[b])) || (s[b] >= 0x1c && s[b] <= 0x1f))) ++b;
  return s.substr(b);
}

}  // namespace

Pipeline parse_pipeline(const std::string& name) {
  if (name == "pred_py") return Pipeline::PredPy;
  if (name == "kvcache_factory") return Pipeline::KvcacheFactory;
  if (name == "kvpress") return Pipeline::Kvpress;
  throw std::logic_error("longbench: '" + name + "' is not a pipeline (the declared choices are checked first)");
}

const char* to_string(Pipeline pipeline) {
  switch (pipeline) {
    case Pipeline::PredPy: return "pred_py";
    case Pipeline::KvcacheFactory: return "kvcache_factory";
    case Pipeline::Kvpress: return "kvpress";
  }
  return "?";
}

std::vector<std::string> pipeline_names() { return {"pred_py", "kvcache_factory", "kvpress"}; }

int64_t kvcache_factory_max_length(const std::string& model) {
  // run_longbench.py @7ee6be0 model2maxlen, in its order (the last matching key wins).
  static const std::vector<std::pair<std::string, int64_t>> table = {
      {"llama2", 3950}, {"llama-2", 3950}, {"llama3", 7950}, {"llama-3", 7950}, {"mistral", 31500}};
  std::string lower = model;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  int64_t found = 0;
  for (const auto& [key, value] : table)
    if (lower.find(key) != std::string::npos) found = value;
  if (found == 0)
    throw std::invalid_argument("task_params.max_length_model '" + model +
                                "' matches no key of KVCache-Factory's model2maxlen (llama2, llama-2, llama3, llama-3, "
                                "mistral); set task_params.max_length instead");
  return found;
}

PreparedPrompt kvcache_factory_prompt(const models::Tokenizer& tokenizer, const std::string& prompt_template,
                                      const datasets::JsonRecord& record, int64_t max_length,
                                      const std::string& chat_template) {
  const std::string wrapped = apply_chat_template(chat_template, format_prompt(prompt_template, record), tokenizer);
  TruncatedText t = truncate_middle(tokenizer, wrapped, max_length);
  return {t.text, t.original_tokens, t.truncated};
}

KvpressParts kvpress_parts(const std::string& subset, const std::string& prompt_template,
                           const datasets::JsonRecord& record, const std::string& chat_template,
                           const models::Tokenizer& tokenizer) {
  const KvpressSplit* split = kvpress_split(subset);
  const size_t at = prompt_template.rfind(split->question_start);
  if (at == std::string::npos)
    throw std::invalid_argument("longbench/" + subset + ": the prompt template has no '" + split->question_start +
                                "' where kvpress starts the question");
  const std::string answer_prefix = split->answer_prefix;
  std::string question_template = prompt_template.substr(at);
  if (!split->prefix_in_input) {
    if (!ends_with(question_template, answer_prefix))
      throw std::invalid_argument("longbench/" + subset + ": the prompt template does not end with the answer prefix '" +
                                  answer_prefix + "'");
    question_template.resize(question_template.size() - answer_prefix.size());
  }
  if (subset == "lcc") question_template = "{input}";  // kvpress asks the (empty) input after the code
  std::string input = record.has("input") ? record.string_field("input") : "";
  if (split->prefix_in_input && ends_with(input, answer_prefix)) input.resize(input.size() - answer_prefix.size());

  return tasks::kvpress_parts(format_prompt(prompt_template.substr(0, at), record), metrics::python_replace(question_template, "{input}", input),
                              answer_prefix, chat_template, tokenizer);
}

std::string kvpress_scored_prediction(const std::string& subset, const std::string& prediction) {
  std::string p = lstrip(prediction);
  if (subset == "trec" || subset == "triviaqa" || subset == "samsum" || subset == "lsht") p = p.substr(0, p.find('\n'));
  return p;
}

}  // namespace kvbench::tasks::longbench
