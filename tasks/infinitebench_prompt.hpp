#pragma once
// InfiniteBench's prompts as its official code builds them (OpenBMB/InfiniteBench @ 88b3daa6
// src/eval_utils.py create_prompt and get_answer, the templates of src/prompt.py) and kvpress's
// rows of the same records (NVIDIA/kvpress evaluation/benchmarks/infinite_bench/
// create_huggingface_dataset.py). The templates, max new tokens and kvpress's prefixes are data:
// data/infinitebench/templates.json, written from the official modules by
// scripts/infinitebench_reference/extract_templates.py.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/jsonl_reader.hpp"

namespace kvbench::tasks::infinitebench {

// templates.json: {"tasks", "max_new_tokens", "families", "templates", "kvpress"}.
const nlohmann::json& templates();

// One record of <task>.jsonl as released: id, context, input, answer, options (nothing else).
struct Record {
  int64_t id = 0;
  std::string context, input;
  nlohmann::json answer;             // a list (strings or numbers) or a bare value, as the file holds it
  std::vector<std::string> options;  // four for longbook_choice_eng and code_debug, else empty
};
Record read_record(const datasets::JsonRecord& r, const std::string& task);

// create_prompt(eg, task, model): `family` one of templates()["families"] (yarn-mistral, gpt4,
// claude2, kimi, and the model names mapped to them). Throws where the official code raises (a
// template naming a field create_prompt does not give it: claude2's longbook_qa_eng, kimi's
// file-upload templates).
std::string create_prompt(const Record& record, const std::string& task, const std::string& family);

// get_answer(eg, task): the ground truth the scorer reads ([option text, letter] for the choice tasks).
nlohmann::json ground_truth(const Record& record, const std::string& task);

// A record as kvpress's InfiniteBench dataset holds it.
struct KvpressRow {
  std::string context, question, answer_prefix;
  std::vector<std::string> answer;  // Hugging Face's string cast of the answer (choice tasks: the letter)
  int64_t max_new_tokens = 0;       // the official value + 20
};
KvpressRow kvpress_row(const Record& record, const std::string& task);

}  // namespace kvbench::tasks::infinitebench
