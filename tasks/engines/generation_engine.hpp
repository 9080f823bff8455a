#pragma once
// Generate-and-score: one prompt through the job's policy/protocol, greedy unless the task says
// otherwise, cut at the task's stop strings.
#include <string>
#include <vector>

#include "tasks/task.hpp"

namespace kvbench::tasks {

struct DecodingSettings {
  int64_t max_new_tokens = 64;
  std::vector<std::string> stop_strings;  // the completion is cut before the first one
  bool stop_at_eos = true;
  std::vector<int64_t> stop_token_ids;  // more stop tokens besides EOS (LongBench samsum: "\n")
  int64_t min_new_tokens = 0;           // stop tokens are masked until this many are generated
  double temperature = 0.0;
  double top_p = 1.0;
  nlohmann::json to_json() const;
};

struct Completion {
  std::string text;
  std::vector<int64_t> tokens;
  int64_t prompt_tokens = 0;
};

// Runs the prompt (already tokenised, BOS included) and returns the completion text.
Completion complete(const TaskContext& ctx, const std::vector<int64_t>& prompt, const DecodingSettings& decoding);

// kvpress's pipeline: `context` is prefilled under the job's protocol (the policy compresses it),
// then `question` is fed token by token without prefill compression (under the oneshot protocol
// nothing is evicted after the context), and the answer is decoded greedily from there.
Completion complete_after_context(const TaskContext& ctx, const std::vector<int64_t>& context,
                                  const std::vector<int64_t>& question, const DecodingSettings& decoding);

// Tokenises with BOS.
std::vector<int64_t> encode_prompt(const TaskContext& ctx, const std::string& text);
// add_special_tokens=false for text that already holds them (a model's own chat template).
std::vector<int64_t> encode_prompt(const TaskContext& ctx, const std::string& text, bool add_special_tokens);

}  // namespace kvbench::tasks
