#pragma once
// One sequence through the model under an eviction policy and a protocol: prefill, then decode
// steps. Tracks the original position of the next token and memory (logical KV bytes, peak).
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "models/protocol.hpp"
#include "models/transformer.hpp"
#include "policies/budget.hpp"
#include "policies/context_rescoring.hpp"
#include "policies/policy.hpp"

namespace kvbench::models {

struct SessionOptions {
  Protocol protocol = Protocol::kOneShot;
  int64_t block = 1;  // stream protocol: prompt block size
  policies::Budget budget = policies::Budget::unlimited();
  uint64_t seed = 0;
  AttentionPath attention = AttentionPath::kAuto;  // models/attention_path.hpp
  bool cuda_graphs = false;                        // CacheControl::decode_graphs
  // The model's tokenizer and chat template, for a policy that writes its scoring inputs as text
  // (policies/context_rescoring.hpp); null: none (such a policy then refuses).
  std::shared_ptr<const policies::PromptText> text;
};

class InferenceSession {
 public:
  // `policy` may be null (the full cache). The session does not own the model or the policy.
  InferenceSession(const Transformer& model, policies::Policy* policy, SessionOptions options);

  // Feeds the prompt. Returns logits [T, vocab] for every prompt token when all_logits (the row
  // of token t predicts token t+1), else [1, vocab] for the last. `query_tokens`: how many of the
  // prompt's last tokens are the question (a query-aware prompt; SequenceInfo::query_tokens).
  torch::Tensor prefill(const std::vector<int64_t>& tokens, bool all_logits = false, int64_t query_tokens = 0);
  // Feeds more prompt tokens after the cache as it stands (a later turn of a conversation): as
  // prefill does (blocks under stream), but the policy is not begun again and the phase is
  // kPrefillBlock. Returns the logits [1, vocab] of the last token.
  torch::Tensor extend(const std::vector<int64_t>& tokens);
  // Appends one token and returns the logits [vocab] that predict the next one.
  torch::Tensor step(int64_t token);

  const Transformer& model() const { return model_; }
  policies::KVCache& cache() { return cache_; }
  int64_t next_position() const { return next_position_; }
  int64_t budget_tokens() const { return info_.budget; }
  int64_t peak_logical_bytes() const { return peak_bytes_; }
  int64_t peak_allocated_bytes() const { return peak_allocated_bytes_; }  // KVCache::allocated_bytes
  int64_t max_cache_len() const { return max_cache_len_; }  // largest head length after any step
  int64_t cache_len() const { return cache_len_; }          // largest head length after the last step
  // Where a later rollback() returns: the next position and the cache's mark. Rolling back drops
  // every token fed since (kvpress's compress-once protocol answers each question this way); it
  // throws when the policy evicted since the checkpoint.
  struct Checkpoint {
    int64_t next_position = 0;
    policies::KVCache::Mark cache;
  };
  Checkpoint checkpoint() const { return {next_position_, cache_.mark()}; }
  void rollback(const Checkpoint& checkpoint);
  // Extra statistics hook for fidelity tasks.
  void set_inspector(CacheControl inspector) { inspector_ = std::move(inspector); }
  // Called with (tokens fed, prompt tokens) after each block of a streamed prefill (long texts).
  using PrefillProgress = std::function<void(int64_t, int64_t)>;
  void set_prefill_progress(PrefillProgress progress) { prefill_progress_ = std::move(progress); }

 private:
  torch::Tensor run(const std::vector<int64_t>& tokens, policies::Phase phase, bool compress, bool all_logits);
  torch::Tensor feed_prompt(const std::vector<int64_t>& tokens, policies::Phase whole, bool all_logits);
  // The prefill replayed from a forward shared with other sessions (models/prefill_share.hpp),
  // where this thread has a share and the prefill qualifies; else nothing.
  std::optional<torch::Tensor> shared_prefill(const std::vector<int64_t>& tokens, bool all_logits);
  // The prefill of a policy that rescores the prompt with more forwards (policies/context_rescoring.hpp):
  // the prompt uncompressed, each scoring input after it and rolled back, what the policy appends
  // (kept), then every layer compressed.
  torch::Tensor rescored_prefill(const std::vector<int64_t>& tokens, bool all_logits);
  void account(int64_t tokens_fed);  // position, memory peaks and cache length after a forward

  const Transformer& model_;
  policies::Policy* policy_;
  SessionOptions options_;
  policies::SequenceInfo info_;
  policies::KVCache cache_;
  CacheControl inspector_;
  PrefillProgress prefill_progress_;
  int64_t next_position_ = 0;
  int64_t peak_bytes_ = 0;
  int64_t peak_allocated_bytes_ = 0;
  int64_t max_cache_len_ = 0;
  int64_t cache_len_ = 0;  // read once per forward (a ragged cache's lengths live on its device)
};

}  // namespace kvbench::models
