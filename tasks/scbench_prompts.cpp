#include "tasks/scbench_prompts.hpp"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include "metrics/python_str.hpp"
#include "metrics/unicode.hpp"
#include "tasks/python_str.hpp"

namespace kvbench::tasks::scbench {

using nlohmann::json;

const std::vector<ScbenchSet>& sets() {
  // Inside: the tasks' registrations call sets() during static initialisation, before any
  // namespace-scope string of this file need be constructed.
  const std::string kPlain = "{context}\n\n{input}", kPlainFollowUp = "{pre_ans}\n\n{input}", kInput = "{input}";
  const std::string kChoiceQuestion = "Question: {question}\nA. {OPTION_A}\nB. {OPTION_B}\nC. {OPTION_C}\nD. {OPTION_D}\n\n";
  static const std::vector<ScbenchSet> sets = {
      {"scbench_kv", "key-value retrieval from a JSON object", "Extract the value corresponding to the specified key in the JSON object below.\n\n{context}\n\n{input}",
       kPlainFollowUp, kInput, "Extract the value corresponding to the specified key in the JSON object below.\n\n{context}",
       {{"", {150, "kv_retrieval"}}}, "raw"},
      {"scbench_prefix_suffix", "the string with a given prefix and suffix", kPlain, kPlainFollowUp, kInput, "{context}",
       {{"", {150, "kv_retrieval"}}}, "raw"},
      {"scbench_vt", "variable tracking", kPlain, kPlainFollowUp, kInput, "{context}", {{"", {30, "scbench_vt"}}}, "raw"},
      {"scbench_repoqa", "the function a description names, retrieved from a repository",
       "Based on the function description and code context, please retrieve and repeat the exact described function from the code context in a code block wrapped by ```:\n\n{context}\n\n{input}",
       kPlainFollowUp, kInput,
       "Based on the function description and code context, please retrieve and repeat the exact described function from the code context in a code block wrapped by ```:\n\n{context}",
       {{"", {1024, "repoqa"}}}, "raw"},
      {"scbench_qa_eng", "English QA over a book", "Read the book and answer the question. Be very concise in your answer.\n\n{context}\n\nQuestion: {question}\nAnswer:",
       "{pre_ans}\n\nQuestion: {question}\nAnswer:", "Question: {question}\nAnswer:",
       "Read the book and answer the question. Be very concise in your answer.\n\n{context}", {{"", {40, "longdialogue_qa_eng"}}}, "list"},
      {"scbench_qa_chn", "Chinese QA over a book", "阅读以下书籍然后回答问题。\n\n{context}\n\n问题：{question}\n答案：", "{pre_ans}\n\n问题：{question}\n答案：",
       "问题：{question}\n答案：", "阅读以下书籍然后回答问题。\n\n{context}", {{"", {40, "longbook_qa_chn"}}}, "raw"},
      {"scbench_choice_eng", "multiple choice over a book",
       "Read the book and answer the question.\n\n{context}\n\n" + kChoiceQuestion + "The the correct answer is",
       "{pre_ans}\n\n" + kChoiceQuestion + "The letter of the correct answer is", kChoiceQuestion + "The the correct answer is",
       "Read the book and answer the question.\n\n{context}", {{"", {40, "longbook_choice_eng"}}}, "choice"},
      {"scbench_many_shot", "many-shot in-context learning", kPlain, kPlainFollowUp, kInput, "{context}", {{"", {10, "longdialogue_qa_eng"}}}, "raw"},
      {"scbench_mf", "the maximum or minimum of a list", "{prefix}\n\n{context}\n\n{input}", "{pre_ans}\n\n{prefix}\n\n{input}",
       "{prefix}\n\n{input}", "{prefix}\n\n{context}", {{"", {5, "math_find"}}}, "raw"},
      {"scbench_summary", "summarisation", kPlain, kPlainFollowUp, kInput, "{context}", {{"", {200, "longbook_sum_eng"}}}, "raw"},
      {"scbench_summary_with_needles", "summarisation with passkey needles (two scores per turn)", kPlain, kPlainFollowUp, kInput,
       "{context}", {{"scbench_summary", {800, "longbook_sum_eng"}}, {"scbench_passkey", {15, "passkey"}}}, "raw"},
      {"scbench_repoqa_and_kv", "RepoQA and key-value retrieval turns on one context (two scores per turn)", kPlain, kPlainFollowUp, kInput,
       "{context}", {{"scbench_repoqa", {1024, "repoqa"}}, {"scbench_kv", {80, "kv_retrieval"}}}, "raw"},
  };
  return sets;
}

// Python's str() of a JSON answer as str.format pastes it: a str as is, an int in decimal, a list
// as its repr (['a', 'b']).
std::string python_str(const json& value, bool inside) {
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    if (!inside) return s;
    const char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
    std::string out(1, quote);
    for (char c : s) {
      if (c == '\\') out += "\\\\";
      else if (c == quote) out += std::string("\\") + c;
      else if (c == '\n') out += "\\n";
      else if (c == '\t') out += "\\t";
      else if (c == '\r') out += "\\r";
      else out += c;
    }
    return out + quote;
  }
  if (value.is_number_integer()) return value.dump();
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + python_str(value[i], true);
    return out + "]";
  }
  throw std::invalid_argument("an answer or context of type " + std::string(value.type_name()) + " SCBench does not use");
}


Record read_record(const datasets::JsonRecord& r, const ScbenchSet& set, int64_t max_turns) {
  Record out{r, python_str(r.has("context") ? r.field("context") : r.field("input")), {}};
  const json& turns = r.field("multi_turns");
  if (!turns.is_array() || turns.empty()) throw r.field_error("multi_turns", "expected a non-empty list of turns");
  for (size_t i = 0; i < turns.size() && static_cast<int64_t>(i) < max_turns; ++i) {
    const datasets::JsonRecord turn{r.file, r.line, turns[i]};
    if (!turns[i].is_object()) throw r.field_error("multi_turns", "turn " + std::to_string(i) + " is not an object");
    Turn t{turn.string_field("input"), set.per_tag.count("") ? "" : turn.string_field("task"), turn.field("answer"), {}};
    if (!set.per_tag.count(t.tag)) throw turn.field_error("task", "'" + t.tag + "' is not a sub-task of " + set.name);
    if (set.label == "choice") {
      t.options = turn.string_list_field("options");
      if (t.options.size() != 4) throw turn.field_error("options", "expected 4 options");
      if (!t.answer.is_string() || std::find(t.options.begin(), t.options.end(), t.answer.get<std::string>()) == t.options.end())
        throw turn.field_error("answer", "is not one of the options (get_ground_truth's options.index fails)");
    }
    if (set.per_tag.at(t.tag).second == "repoqa") {
      t.function = turn.string_field("name");
      if (out.repo.empty()) out.repo = r.string_field("repo"), out.lang = r.string_field("lang");
    }
    out.turns.push_back(std::move(t));
  }
  return out;
}

// get_ground_truth: what the scorer receives.
json label_of(const ScbenchSet& set, const Turn& t) {
  if (set.label == "list") return json::array({t.answer});
  if (set.label == "choice") {
    const size_t index = std::find(t.options.begin(), t.options.end(), t.answer.get<std::string>()) - t.options.begin();
    return json::array({t.answer, std::string(1, "ABCD"[index])});
  }
  return t.answer;
}

namespace {

// mf's prefix: "What is " + the question's first "The .+ is" match (greedy, one line), lower-cased,
// less its " is" + "?".
std::string mf_prefix(const std::string& input) {
  static const std::regex pattern("The .+ is");
  std::smatch m;
  if (!std::regex_search(input, m, pattern)) throw std::invalid_argument("scbench_mf: a question without 'The ... is': " + input);
  const std::string target = metrics::python_lower(m.str());
  return "What is " + target.substr(0, target.size() - 3) + "?";
}

std::map<std::string, std::string> fields_of(const Record& r, const Turn& t, const std::string& prefix) {
  std::map<std::string, std::string> f = {{"context", r.context}, {"input", t.input}, {"question", t.input}, {"prefix", prefix}};
  const char* names[] = {"OPTION_A", "OPTION_B", "OPTION_C", "OPTION_D"};
  for (size_t i = 0; i < t.options.size(); ++i) f[names[i]] = t.options[i];
  return f;
}

std::string format(const std::string& tmpl, const std::map<std::string, std::string>& fields) {
  return python_format(tmpl, [&](const std::string& name) {
    auto it = fields.find(name);
    if (it == fields.end()) throw std::invalid_argument("scbench: template field '" + name + "' has no value");
    return it->second;
  });
}

// Python's str.split(sep)[index].
std::string split_part(const std::string& text, const std::string& sep, size_t index) {
  size_t begin = 0;
  for (size_t i = 0; i < index; ++i) {
    const size_t at = text.find(sep, begin);
    if (at == std::string::npos) throw std::invalid_argument("scbench: the chat template dropped the delimiter");
    begin = at + sep.size();
  }
  return text.substr(begin, text.find(sep, begin) - begin);
}

}  // namespace

// create_multiturn_prompt: the first prompt, then each follow-up.
std::vector<std::string> turn_prompts(const ScbenchSet& set_, const Record& r, bool gold, const models::ModelChatTemplate* chat) {
  const bool mf = set_.name == "scbench_mf";
  std::vector<std::string> prefixes;
  for (const Turn& t : r.turns) prefixes.push_back(mf ? mf_prefix(t.input) : "");
  std::vector<std::string> prompts = {format(set_.first, fields_of(r, r.turns[0], prefixes[0]))};
  if (chat) prompts[0] = chat->render_user_prompt(prompts[0]);
  // Chat follow-ups: eval_utils.py's leftover `prefix` (the last turn's) for every mf turn.
  const std::string system = chat ? chat->render(json::array({{{"role", "system"}, {"content", ""}}}), gold) : "";
  for (size_t i = 1; i < r.turns.size(); ++i) {
    std::map<std::string, std::string> f = fields_of(r, r.turns[i], chat ? prefixes.back() : prefixes[i]);
    f["pre_ans"] = gold ? python_str(r.turns[i - 1].answer) : "None";
    if (!chat) {
      prompts.push_back(format(gold ? set_.follow_up : set_.question, f));
      continue;
    }
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    if (gold) {
      messages.push_back({{"role", "system"}, {"content", ""}});
      messages.push_back({{"role", "assistant"}, {"content", python_str(r.turns[i - 1].answer)}});
    }
    messages.push_back({{"role", "user"}, {"content", format(set_.question, f)}});
    prompts.push_back(metrics::python_replace(chat->render(messages, true), system, "") + (set_.name == "scbench_summary" ? "This paper" : ""));
  }
  return prompts;
}

// create_scdq_prompt: the context alone, then each question.
std::vector<std::string> request_prompts(const ScbenchSet& set_, const Record& r, const models::ModelChatTemplate* chat) {
  const std::string delimiter = "[SEPSEPSEP]";
  // mf: eval_utils.py passes the first question itself as the context's prefix.
  std::string context = format(set_.context_only, fields_of(r, r.turns[0], r.turns[0].input));
  if (chat) context = split_part(chat->render_user_prompt(context + delimiter), delimiter, 0);
  std::vector<std::string> prompts = {context};
  for (const Turn& t : r.turns) {
    std::string q = format(set_.question, fields_of(r, t, set_.name == "scbench_mf" ? mf_prefix(t.input) : ""));
    if (chat)
      q = split_part(chat->render(nlohmann::ordered_json::array({{{"role", "system"}, {"content", ""}}, {{"role", "user"}, {"content", delimiter + q}}}), true),
                     delimiter, 1);
    prompts.push_back(q);
  }
  return prompts;
}

}  // namespace kvbench::tasks::scbench
