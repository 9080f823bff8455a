#pragma once
// Generate-and-score: one prompt through the job's policy/protocol, greedy unless the task says
// otherwise, cut at the task's stop strings.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/generation.hpp"
#include "models/logits_processors.hpp"
#include "tasks/task.hpp"

namespace kvbench::tasks {

struct DecodingSettings {
  int64_t max_new_tokens = 64;
  std::vector<std::string> stop_strings;  // the completion is cut before the first one
  bool stop_at_eos = true;
  std::vector<int64_t> stop_token_ids;  // more stop tokens besides EOS (LongBench samsum: "\n")
  int64_t min_new_tokens = 0;           // stop tokens are masked until this many are generated
  models::SamplingSettings sampling;    // greedy unless the task samples
  nlohmann::json to_json() const;
};

struct Completion {
  std::string text;
  std::vector<int64_t> tokens;
  int64_t prompt_tokens = 0;
  int64_t cache_peak = 0;  // the most tokens one head's cache held at any step
};

// Greedy tokens after `logits` (what the last token fed predicts), each but the last fed back
// into `session`; `stopped` when a stop token (decoding's, and EOS with stop_at_eos) ended them
// rather than the limit. Throws std::invalid_argument, naming `engine`, for settings other than
// greedy with stop tokens (kvpress's pipeline, SCBench's turns).
struct GreedyAnswer {
  models::GenerationResult result;  // tokens and decode seconds
  bool stopped = false;
};
void require_greedy_stop_tokens(const DecodingSettings& decoding, const std::string& engine);
GreedyAnswer answer_greedily(const TaskContext& ctx, models::InferenceSession& session, torch::Tensor logits,
                             const DecodingSettings& decoding);
// Adds one finished sequence (prompt_tokens fed, then `out`) to the job's meter.
void meter_sequence(const TaskContext& ctx, models::InferenceSession& session, int64_t prompt_tokens, const models::GenerationResult& out);

// Runs the prompt (already tokenised, BOS included) and returns the completion text.
Completion complete(const TaskContext& ctx, const std::vector<int64_t>& prompt, const DecodingSettings& decoding);

// kvpress's pipeline and its compress-once protocol: a context is prefilled under the job's
// protocol (the policy compresses it) once; each question is then fed token by token after it,
// answered greedily, and the cache rolled back to the compressed context for the next question.
// Under the oneshot protocol nothing is evicted after the prefill, so every answer equals the one a
// separate prefill of the same context gives; under stream/decode (eviction while answering) each
// question gets its own prefill. prefills() counts the prefills run. `query_tokens`: the context's
// last tokens that are the question (KvpressIds::query_tokens).
class CompressOnce {
 public:
  explicit CompressOnce(const TaskContext& ctx);
  ~CompressOnce();
  Completion answer(const std::vector<int64_t>& context, const std::vector<int64_t>& question,
                    const DecodingSettings& decoding, int64_t query_tokens = 0);
  int64_t prefills() const { return prefills_; }

 private:
  struct Held;
  const TaskContext& ctx_;
  std::unique_ptr<Held> held_;  // the last context's session, rolled back after each answer
  int64_t prefills_ = 0;
};

// The order to run n examples in: 0..n-1, or with `group` the examples whose contexts
// (context_of(i)) are equal made adjacent — groups in order of first appearance, each in its
// original order — since kvpress answers every question of one context together. The contexts
// are compared where they lie, never copied.
std::vector<size_t> run_order(size_t n, const std::function<const std::vector<int64_t>&(size_t)>& context_of, bool group);

// Tokenises with BOS.
std::vector<int64_t> encode_prompt(const TaskContext& ctx, const std::string& text);
// add_special_tokens=false for text that already holds them (a model's own chat template).
std::vector<int64_t> encode_prompt(const TaskContext& ctx, const std::string& text, bool add_special_tokens);

}  // namespace kvbench::tasks
