#include "datasets/ruler/ruler_config.hpp"

#include <stdexcept>

#include "datasets/python_format.hpp"

namespace kvbench::datasets::ruler {
namespace {

const GeneratorConstants kConstants[] = {
    {Generator::niah, "niah", 128,
     "Some special magic {type_needle_v} are hidden within the following text. Make sure to memorize it. I will quiz "
     "you about the {type_needle_v} afterwards.\n{context}\nWhat are all the special magic {type_needle_v} for {query} "
     "mentioned in the provided text?",
     " The special magic {type_needle_v} for {query} mentioned in the provided text are", "string_match_all"},
    {Generator::variable_tracking, "variable_tracking", 30,
     "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n{context}\nQuestion: "
     "Find all variables that are assigned the value {query} in the text above.",
     " Answer: According to the chain(s) of variable assignment in the text above, {num_v} variables are assigned the "
     "value {query}, they are: ",
     "string_match_all"},
    {Generator::common_words_extraction, "common_words_extraction", 120,
     "Below is a numbered list of words. In these words, some appear more often than others. Memorize the ones that "
     "appear most often.\n{context}\nQuestion: What are the 10 most common words in the above list?",
     " Answer: The top 10 words that appear most often in the list are:", "string_match_all"},
    {Generator::freq_words_extraction, "freq_words_extraction", 50,
     "Read the following coded text and track the frequency of each coded word. Find the three most frequently "
     "appeared coded words. {context}\nQuestion: Do not provide any explanation. Please ignore the dots '....'. What "
     "are the three most frequently appeared words in the above coded text?",
     " Answer: According to the coded text above, the three most frequently appeared words are:", "string_match_all"},
    {Generator::qa, "qa", 32,
     "Answer the question based on the given documents. Only give me the answer and do not output any other "
     "words.\n\nThe following are given documents.\n\n{context}\n\nAnswer the question based on the given documents. "
     "Only give me the answer and do not output any other words.\n\nQuestion: {query}",
     " Answer:", "string_match_part"},
};

nlohmann::json niah(const char* haystack, const char* k, const char* v, int num_k, int num_v, int num_q) {
  return {{"type_haystack", haystack}, {"type_needle_k", k},  {"type_needle_v", v},
          {"num_needle_k", num_k},     {"num_needle_v", num_v}, {"num_needle_q", num_q}};
}

const std::vector<std::pair<std::string, std::string>>& templates() {
  static const std::vector<std::pair<std::string, std::string>> t = {
      {"base", "{task_template}"},
      {"meta-chat", "[INST] {task_template} [/INST]"},
      {"vicuna-chat",
       "A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, detailed, "
       "and polite answers to the user's questions. USER: {task_template} ASSISTANT:"},
      {"lwm-chat", "You are a helpful assistant. USER: {task_template} ASSISTANT: "},
      {"command-r-chat",
       "<BOS_TOKEN><|START_OF_TURN_TOKEN|><|USER_TOKEN|>{task_template}<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|>"
       "<|CHATBOT_TOKEN|>"},
      {"chatglm-chat", "[gMASK]sop<|user|> \n {task_template}<|assistant|> \n "},
      {"RWKV",
       "User: hi\n\nAssistant: Hi. I am your assistant and I will provide expert full response in full details. Please "
       "feel free to ask any question and I will always answer it\n\nUser: {task_template}\n\nAssistant:"},
      {"Phi3", "<|user|>\n{task_template}<|end|>\n<|assistant|>\n"},
      {"meta-llama3",
       "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n{task_template}<|eot_id|><|start_header_id|>"
       "assistant<|end_header_id|>\n\n"},
      {"jamba", "<|startoftext|><|bom|><|system|> <|eom|><|bom|><|user|> {task_template}<|eom|><|bom|><|assistant|>"},
      {"nemotron5-instruct", "<SPECIAL_10>System\n\n<SPECIAL_11>User\n{task_template}\n<SPECIAL_11>Assistant\n"},
  };
  return t;
}

}  // namespace

const std::vector<TaskConfig>& tasks() {
  static const std::vector<TaskConfig> t = {
      {"niah_single_1", Generator::niah, niah("noise", "words", "numbers", 1, 1, 1)},
      {"niah_single_2", Generator::niah, niah("essay", "words", "numbers", 1, 1, 1)},
      {"niah_single_3", Generator::niah, niah("essay", "words", "uuids", 1, 1, 1)},
      {"niah_multikey_1", Generator::niah, niah("essay", "words", "numbers", 4, 1, 1)},
      {"niah_multikey_2", Generator::niah, niah("needle", "words", "numbers", 1, 1, 1)},
      {"niah_multikey_3", Generator::niah, niah("needle", "uuids", "uuids", 1, 1, 1)},
      {"niah_multivalue", Generator::niah, niah("essay", "words", "numbers", 1, 4, 1)},
      {"niah_multiquery", Generator::niah, niah("essay", "words", "numbers", 1, 1, 4)},
      {"vt", Generator::variable_tracking, {{"type_haystack", "noise"}, {"num_chains", 1}, {"num_hops", 4}}},
      {"cwe", Generator::common_words_extraction, {{"freq_cw", 30}, {"freq_ucw", 3}, {"num_cw", 10}}},
      {"fwe", Generator::freq_words_extraction, {{"alpha", 2.0}}},
      {"qa_1", Generator::qa, {{"dataset", "squad"}}},
      {"qa_2", Generator::qa, {{"dataset", "hotpotqa"}}},
  };
  return t;
}

const TaskConfig& task(const std::string& name) {
  std::string known;
  for (const TaskConfig& t : tasks()) {
    if (t.name == name) return t;
    known += (known.empty() ? "" : ", ") + t.name;
  }
  throw std::invalid_argument("unknown RULER task '" + name + "' (known: " + known + ")");
}

const GeneratorConstants& constants(Generator generator) {
  for (const GeneratorConstants& c : kConstants)
    if (c.generator == generator) return c;
  throw std::logic_error("ruler: a generator without constants");
}

std::vector<std::string> model_template_names() {
  std::vector<std::string> names;
  for (const auto& [name, text] : templates()) names.push_back(name);
  return names;
}

const std::string& model_template(const std::string& name) {
  for (const auto& [n, text] : templates())
    if (n == name) return text;
  std::string known;
  for (const auto& n : model_template_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown RULER model_template_type '" + name + "' (known: " + known + ")");
}

std::string full_template(const TaskConfig& task, const std::string& model_template_type) {
  const GeneratorConstants& c = constants(task.generator);
  return python_format(model_template(model_template_type), {{"task_template", c.template_text}}) + c.answer_prefix;
}

}  // namespace kvbench::datasets::ruler
