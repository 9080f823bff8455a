#include "tasks/lm_eval.hpp"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include "tasks/python_str.hpp"

namespace kvbench::tasks::lm_eval {
namespace {

McDoc shared_context(std::string context, const std::vector<std::string>& choices, size_t gold, bool acc_norm) {
  McDoc d;
  for (const auto& c : choices) {
    d.contexts.push_back(context);
    d.continuations.push_back(" " + c);
    d.choice_texts.push_back(c);
  }
  d.gold = gold;
  d.fewshot_text = context + " " + choices.at(gold);
  d.has_acc_norm = acc_norm;
  return d;
}

size_t binary_label(const datasets::JsonRecord& r, const std::string& field) {
  const int64_t label = r.int_field(field);
  if (label != 0 && label != 1) throw r.field_error(field, "expected 0 or 1, got " + std::to_string(label));
  return static_cast<size_t>(label);
}

std::string nonempty(const datasets::JsonRecord& r, const std::string& field) {
  std::string s = r.string_field(field);
  if (s.empty()) throw r.field_error(field, "empty");
  return s;
}

McDoc openbookqa(const datasets::JsonRecord& r) {
  const auto& choices = r.field("choices");
  if (!choices.is_object() || !choices.contains("text"))
    throw r.field_error("choices", "expected {\"text\": [...], \"label\": [...]}");
  std::vector<std::string> texts;
  for (const auto& t : choices["text"]) {
    if (!t.is_string()) throw r.field_error("choices", "choices.text must hold strings");
    texts.push_back(t.get<std::string>());
  }
  if (texts.size() != 4) throw r.field_error("choices", "expected 4 choices, got " + std::to_string(texts.size()));
  const std::string key = strip(r.string_field("answerKey"));
  if (key.size() != 1 || key[0] < 'A' || key[0] > 'D') throw r.field_error("answerKey", "expected A-D, got '" + key + "'");
  return shared_context(r.string_field("question_stem"), texts, static_cast<size_t>(key[0] - 'A'), true);
}

McDoc copa(const datasets::JsonRecord& r) {
  const std::string q = r.string_field("question");
  if (q != "cause" && q != "effect") throw r.field_error("question", "expected cause or effect, got '" + q + "'");
  const std::string premise = strip(r.string_field("premise"));
  if (premise.empty()) throw r.field_error("premise", "empty");
  auto convert_choice = [](std::string c) {
    if (!c.empty() && c[0] >= 'A' && c[0] <= 'Z') c[0] = static_cast<char>(c[0] - 'A' + 'a');
    return c;
  };
  std::string context = premise.substr(0, premise.size() - 1) + (q == "cause" ? " because" : " therefore");
  McDoc d = shared_context(context, {convert_choice(nonempty(r, "choice1")), convert_choice(nonempty(r, "choice2"))},
                           binary_label(r, "label"), false);
  return d;
}

McDoc rte(const datasets::JsonRecord& r) {
  const std::string context =
      r.string_field("sentence1") + "\nQuestion: " + r.string_field("sentence2") + " True or False?\nAnswer:";
  return shared_context(context, {"True", "False"}, binary_label(r, "label"), false);  // 0 = entailment
}

McDoc mathqa(const datasets::JsonRecord& r) {
  const std::string correct = r.string_field("correct");
  static const std::string letters = "abcde";
  if (correct.size() != 1 || letters.find(correct[0]) == std::string::npos)
    throw r.field_error("correct", "expected a-e, got '" + correct + "'");
  std::vector<std::string> options = mathqa_options(r.string_field("options"));
  const size_t gold = letters.find(correct[0]);
  if (gold >= options.size())
    throw r.field_error("options", "parsed " + std::to_string(options.size()) + " options, the answer is '" + correct + "'");
  return shared_context("Question: " + r.string_field("Problem") + "\nAnswer:", options, gold, true);
}

McDoc piqa(const datasets::JsonRecord& r) {
  return shared_context("Question: " + r.string_field("goal") + "\nAnswer:", {r.string_field("sol1"), r.string_field("sol2")},
                        binary_label(r, "label"), true);
}

McDoc winogrande(const datasets::JsonRecord& r) {
  const std::string sentence = r.string_field("sentence");
  const size_t blank = sentence.find('_');
  if (blank == std::string::npos) throw r.field_error("sentence", "no '_' blank");
  const std::string answer = r.string_field("answer");
  if (answer != "1" && answer != "2") throw r.field_error("answer", "expected \"1\" or \"2\", got '" + answer + "'");
  const std::string target = " " + strip(sentence.substr(blank + 1));
  McDoc d;
  for (const char* field : {"option1", "option2"}) {
    const std::string option = r.string_field(field);
    d.contexts.push_back(sentence.substr(0, blank) + option);
    d.continuations.push_back(target);
    d.choice_texts.push_back(option);
  }
  d.gold = answer == "1" ? 0 : 1;
  d.fewshot_text = d.contexts[d.gold] + target;
  return d;
}

}  // namespace

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> names = {"openbookqa", "copa", "rte", "mathqa", "piqa", "winogrande"};
  return names;
}

std::string eval_split(const std::string& task) {
  return task == "openbookqa" || task == "mathqa" ? "test" : "validation";
}

std::vector<std::string> mathqa_options(const std::string& options) {
  // re.findall(r"[abcd] \) .*?, |e \) .*?$", options); each c[4:].rstrip(" ,")
  static const std::regex pattern(R"([abcd] \) .*?, |e \) .*?$)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(options.begin(), options.end(), pattern); it != std::sregex_iterator(); ++it) {
    std::string c = it->str();
    c = c.size() > 4 ? c.substr(4) : "";
    while (!c.empty() && (c.back() == ' ' || c.back() == ',')) c.pop_back();
    out.push_back(c);
  }
  return out;
}

McDoc convert(const std::string& task, const datasets::JsonRecord& record) {
  McDoc d = task == "openbookqa" ? openbookqa(record)
            : task == "copa"     ? copa(record)
            : task == "rte"      ? rte(record)
            : task == "mathqa"   ? mathqa(record)
            : task == "piqa"     ? piqa(record)
            : task == "winogrande"
                ? winogrande(record)
                : throw std::invalid_argument("unknown lm_eval task '" + task + "'");
  d.id = record.file.substr(record.file.find_last_of('/') + 1) + ":" + std::to_string(record.line);
  return d;
}

std::string fewshot_prefix(const std::vector<const McDoc*>& shots) {
  std::string p;
  for (const McDoc* s : shots) p += s->fewshot_text + "\n\n";
  return p;
}

}  // namespace kvbench::tasks::lm_eval
