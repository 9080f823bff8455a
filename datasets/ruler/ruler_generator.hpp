#pragma once
// A native NVIDIA/RULER data generator: scripts/data/prepare.py for one synthetic.yaml task, with
// the same random streams, binary searches over the haystack size (measured with the model's own
// tokenizer), templates and record fields, so its JSONL equals the official script's byte for
// byte. The differences: a sample that cannot fit even the smallest haystack is an error (the
// scripts retry forever), and NeMo-skills' --prepare_for_ns / --chunk_idx are not offered.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "datasets/ruler/ruler_data.hpp"

namespace kvbench::datasets::ruler {

// prepare.py's arguments.
struct Request {
  std::string task;              // a synthetic.yaml name: niah_single_1, ..., qa_2
  int64_t max_seq_length = 4096;  // input tokens plus tokens_to_generate
  int64_t num_samples = 500;
  int64_t random_seed = 42;
  std::string model_template_type = "base";
  bool remove_newline_tab = false;
  // The task scripts' --tokens_to_generate (prepare.py passes the task's constant).
  std::optional<int64_t> tokens_to_generate;
};

// One line of the output manifest, fields in the scripts' order.
struct Sample {
  int64_t index = 0;  // niah: the code-point offset of the first answer in `input` (-1: absent)
  std::string input;  // the prompt up to the answer prefix
  std::vector<std::string> outputs;
  int64_t length = 0;  // tokens of input + answer prefix, plus tokens_to_generate
  int64_t length_w_model_temp = 0;
  std::string answer_prefix;
  std::optional<int64_t> token_position_answer;  // niah only
};

// Tokens of a text without special tokens added (RULER's len(TOKENIZER.text_to_tokens(text))).
using TokenCounter = std::function<int64_t(const std::string&)>;

std::vector<Sample> generate(const Request& request, const TokenCounter& count_tokens, RulerData& data);

// The data files (RulerData names) the task's generator reads with its synthetic.yaml arguments.
std::vector<std::string> data_file_names(const std::string& task);

// json.dumps(sample, ensure_ascii=True) as manifest_utils.write_manifest writes it (no newline).
std::string manifest_line(const Sample& sample);

}  // namespace kvbench::datasets::ruler
