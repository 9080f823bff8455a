#pragma once
// RULER's task configurations as data: scripts/synthetic.yaml (the 13 tasks and their arguments),
// scripts/data/synthetic/constants.py (each generator's template, answer prefix and
// tokens_to_generate) and scripts/data/template.py (the model templates wrapped around them).
// NVIDIA/RULER @ c3f5e3b4.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kvbench::datasets::ruler {

enum class Generator { niah, variable_tracking, common_words_extraction, freq_words_extraction, qa };

struct GeneratorConstants {
  Generator generator;
  const char* name;  // the script: niah, variable_tracking, ...
  int tokens_to_generate;
  const char* template_text;
  const char* answer_prefix;
  const char* metric;  // scripts/eval/synthetic/constants.py: string_match_all | string_match_part
};

struct TaskConfig {
  std::string name;  // niah_single_1, ..., qa_2
  Generator generator;
  nlohmann::json args;  // synthetic.yaml's args (type_haystack, num_needle_k, ...)
};

const std::vector<TaskConfig>& tasks();  // the 13, in synthetic.yaml's order
const TaskConfig& task(const std::string& name);  // throws std::invalid_argument listing them
const GeneratorConstants& constants(Generator generator);

// template.py's Templates: the names, and the template with {task_template}.
std::vector<std::string> model_template_names();
const std::string& model_template(const std::string& name);  // throws std::invalid_argument

// prepare.py: model_template.format(task_template=template) + answer_prefix.
std::string full_template(const TaskConfig& task, const std::string& model_template_type);

}  // namespace kvbench::datasets::ruler
