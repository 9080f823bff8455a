#pragma once
// A policy that scores the prompt with more forwards after its prefill, as kvpress's KVComposePress
// runs the context a second time after itself (or, standalone(), with forwards of their own before
// it). The session (models/inference_session.cpp) drives
// it under the oneshot and decode protocols: it prefills without compressing, runs each of
// scoring_inputs() after the prompt (begin_scoring_input() first; the policy observes every layer
// of that forward) and rolls the cache back to the prompt after each, then calls compress() on
// every layer with Phase::kPrefill. The scoring forwards' tokens count in the cache's peak memory,
// as in the reference. A policy may append rows to the prompt's cache between its scoring forwards
// and compress() (appended(): kvpress's RestoreKV).
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tensorio/peft_lora_adapter.hpp"

namespace kvbench::policies {

// The model's text side, for a policy that writes its scoring inputs as text (kvpress's KVzip asks
// the model to repeat the context): the tokenizer without special tokens added, and the model's own
// chat template rendered around one user message (add_generation_prompt, enable_thinking false);
// nullopt when the tokenizer has no chat template. The session gets it from the task
// (SessionOptions::text).
struct PromptText {
  std::function<std::vector<int64_t>(const std::string& text)> encode;
  // The tokenizer as transformers' tokenizer(text) calls it: the special tokens it adds (a BOS).
  std::function<std::vector<int64_t>(const std::string& text)> encode_with_specials;
  std::function<std::optional<std::string>(const std::string& user_message)> chat;
};

// Input embeddings the session runs after the scoring forwards, before compress(): they stay in the
// cache at the positions after the prompt (n … n+N−1), and what follows the prompt comes after them.
struct AppendedEmbeddings {
  torch::Tensor rows;                             // [N, hidden], any float dtype, on any device
  const models::LoraAdapter* adapter = nullptr;   // enabled for this forward only; may be null
  std::string origin;                             // where the rows come from, for errors
};

class ContextRescoring {
 public:
  virtual ~ContextRescoring() = default;
  // The token sequences to feed after `prompt`, each on the prompt's cache alone; `text` is null
  // where the session was given none.
  virtual std::vector<std::vector<int64_t>> scoring_inputs(const std::vector<int64_t>& prompt, const PromptText* text) = 0;
  // observe() calls from here until the next begin_scoring_input() or compress() are input `index`'s.
  virtual void begin_scoring_input(size_t index) = 0;
  // True: each scoring input runs alone on an empty cache from position 0, before the prompt, and
  // also when the budget is unlimited (kvpress's DuoAttention scores the model on calibration
  // texts and sizes heads by a ratio, not a budget).
  virtual bool standalone() const { return false; }
  // What to append once the scoring forwards have run (nothing by default); no policy observes
  // that forward. Valid until compress() returns.
  virtual std::optional<AppendedEmbeddings> appended() { return std::nullopt; }
};

}  // namespace kvbench::policies
