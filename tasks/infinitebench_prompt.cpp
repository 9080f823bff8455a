#include "tasks/infinitebench_prompt.hpp"

#include <algorithm>
#include <cmath>
#include <regex>
#include <stdexcept>

#include "datasets/data_root.hpp"
#include "datasets/json_parse.hpp"
#include "metrics/python_str.hpp"
#include "metrics/unicode.hpp"
#include "tasks/python_str.hpp"

namespace kvbench::tasks::infinitebench {
namespace {

const std::vector<std::string> kFields = {"id", "context", "input", "answer", "options"};

bool is_choice(const std::string& task) { return task == "longbook_choice_eng" || task == "code_debug"; }

// re.findall(r"The .+ of", text)[0]: the leftmost "The ", then the greedy ".+" (anything but a
// newline, at least one character) backs off to the last " of" on that line.
std::string math_find_target_match(const std::string& text) {
  for (size_t start = text.find("The "); start != std::string::npos; start = text.find("The ", start + 1)) {
    const size_t line_end = std::min(text.find('\n', start + 4), text.size());
    const size_t of = text.rfind(" of", line_end >= 3 ? line_end - 3 : 0);
    if (of != std::string::npos && of >= start + 5 && of + 3 <= line_end) return text.substr(start, of + 3 - start);
  }
  throw std::invalid_argument("math_find: no 'The ... of' in the input (create_prompt's assert)");
}

// The prefix create_prompt (and kvpress) put before math_find's list.
std::string math_find_prefix(const std::string& input) {
  std::string target = metrics::python_lower(math_find_target_match(input));
  return "What is " + target.substr(0, target.size() - 3) + " in the following list?";
}

// re.findall(r"func_[0-9]+\(\-?[0-9]+\)", input)[0]
std::string code_run_call(const std::string& input) {
  static const std::regex call(R"(func_[0-9]+\(-?[0-9]+\))");
  std::smatch m;
  if (!std::regex_search(input, m, call)) throw std::invalid_argument("code_run: no func_N(x) call in the input (create_prompt's findall()[0])");
  return m.str(0);
}

std::string format_fields(const std::string& tmpl, const nlohmann::json& fields, const std::string& what) {
  return python_format(tmpl, [&](const std::string& name) {
    if (!fields.contains(name))
      throw std::invalid_argument(what + " names {" + name + "}, which the official code does not supply (it raises KeyError: '" + name + "')");
    return fields.at(name).get<std::string>();
  });
}

nlohmann::json option_fields(const Record& r) {
  return {{"OPTION_A", r.options.at(0)}, {"OPTION_B", r.options.at(1)}, {"OPTION_C", r.options.at(2)}, {"OPTION_D", r.options.at(3)}};
}

// Hugging Face's Value("string") cast of one answer element (pyarrow: an integral double without
// its ".0").
std::string hf_string(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<int64_t>(d));
    return metrics::python_float_str(d);
  }
  throw std::invalid_argument("infinitebench: an answer element that is neither a string nor a number");
}

// The option text the answer names (a string or a one-element list), as get_answer reads it.
std::string answer_text(const Record& r) {
  if (r.answer.is_string()) return r.answer.get<std::string>();
  if (r.answer.is_array() && !r.answer.empty() && r.answer.at(0).is_string()) return r.answer.at(0).get<std::string>();
  throw std::invalid_argument("infinitebench: a choice task's answer must be the option's text");
}

char option_letter(const Record& r, const std::string& text) {
  const auto at = std::find(r.options.begin(), r.options.end(), text);
  if (at == r.options.end()) throw std::invalid_argument("infinitebench: the answer '" + text + "' is not one of the options");
  return "ABCD"[at - r.options.begin()];
}

}  // namespace

const nlohmann::json& templates() {
  static const nlohmann::json data = datasets::read_json_file(datasets::bundled_data_dir() + "/infinitebench/templates.json");
  return data;
}

Record read_record(const datasets::JsonRecord& r, const std::string& task) {
  for (const auto& [key, value] : r.value.items())
    if (std::find(kFields.begin(), kFields.end(), key) == kFields.end()) throw r.field_error(key, "not a field of InfiniteBench's files");
  Record out;
  out.id = r.int_field("id");
  out.context = r.string_field("context");
  out.input = r.string_field("input");
  out.answer = r.field("answer");
  out.options = r.string_list_field("options");
  if (is_choice(task) && out.options.size() != 4) throw r.field_error("options", "needs the four options of " + task);
  if (!is_choice(task) && !out.options.empty()) throw r.field_error("options", "holds options, which " + task + " has none of");
  if (out.answer.is_array() ? out.answer.empty() : out.answer.is_null()) throw r.field_error("answer", "no reference answer");
  if (is_choice(task)) {
    try {
      ground_truth(out, task);
    } catch (const std::invalid_argument& e) {
      throw r.field_error("answer", e.what());
    }
  }
  return out;
}

std::string create_prompt(const Record& r, const std::string& task, const std::string& family_name) {
  const nlohmann::json& families = templates().at("families");
  if (!families.contains(family_name)) throw std::invalid_argument("infinitebench: no template family '" + family_name + "'");
  const std::string family = families.at(family_name).get<std::string>();
  if (family == "gpt4" && task == "math_calc") return r.context;  // the few-shot turns are chat messages there
  const std::string what = "InfiniteBench's " + family + " template for " + task;
  const std::string tmpl = templates().at("templates").at(family).at(task).get<std::string>();
  nlohmann::json fields = {{"context", r.context}};
  if (task == "code_run") {
    const std::string call = code_run_call(r.input);
    fields["func"] = call.substr(0, call.find('('));
    fields["func_call"] = call;
  } else if (task == "code_debug") {
    fields.update(option_fields(r));
  } else if (task == "longbook_choice_eng") {
    fields.update(option_fields(r));
    fields["question"] = r.input;
  } else if (task == "longbook_qa_eng" || task == "longbook_qa_chn") {
    fields["question"] = r.input;
  } else if (task == "math_find") {
    fields["prefix"] = math_find_prefix(r.input);
    fields["input"] = r.input;
  } else if (task == "passkey" || task == "number_string" || task == "kv_retrieval") {
    fields["input"] = r.input;
  }  // longbook_sum_eng, longdialogue_qa_eng, math_calc: the context alone
  return format_fields(tmpl, fields, what);
}

nlohmann::json ground_truth(const Record& r, const std::string& task) {
  if (!is_choice(task)) return r.answer;
  if (r.answer.is_array() && r.answer.size() == 2 && r.answer.at(1).is_string() &&
      std::string("ABCD").find(r.answer.at(1).get<std::string>()) != std::string::npos && r.answer.at(1).get<std::string>().size() == 1)
    return r.answer;
  if (r.answer.is_array() && r.answer.size() != 1) throw std::invalid_argument("infinitebench: a choice answer list holds one option text");
  const std::string text = answer_text(r);
  return nlohmann::json::array({text, std::string(1, option_letter(r, text))});
}

KvpressRow kvpress_row(const Record& r, const std::string& task) {
  const nlohmann::json& kv = templates().at("kvpress");
  const std::string prefix = kv.at("context_prefix").at(task).get<std::string>();
  const std::string what = "kvpress's InfiniteBench context prefix for " + task;
  KvpressRow row;
  if (task == "math_find") {
    row.context = format_fields(prefix, {{"prefix", math_find_prefix(r.input)}, {"context", r.context}, {"input", r.input}}, what);
    row.context = metrics::python_replace(row.context, "You should answer with only one number, no other words. The largest number of the list is:", "");
  } else if (task == "code_run") {
    const std::string call = code_run_call(r.input);
    row.context = format_fields(prefix, {{"func", call.substr(0, call.find('('))}, {"context", r.context}}, what);
  } else {
    row.context = format_fields(prefix, {{"context", r.context}}, what);
  }
  row.question = r.input;
  if (is_choice(task)) {
    row.question += format_fields(kv.at("question_template").at(task).get<std::string>(), option_fields(r), what);
    row.answer = {std::string(1, option_letter(r, answer_text(r)))};
  } else if (r.answer.is_array()) {
    for (const auto& a : r.answer) row.answer.push_back(hf_string(a));
  } else {
    row.answer = {hf_string(r.answer)};
  }
  if (task == "kv_retrieval") row.question = metrics::python_replace(row.question, "The value associated with the specified key is:", "");
  row.answer_prefix = kv.at("answer_prefix").value(task, "");
  row.max_new_tokens = templates().at("max_new_tokens").at(task).get<int64_t>() + 20;
  return row;
}

}  // namespace kvbench::tasks::infinitebench
