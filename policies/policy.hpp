#pragma once
// The eviction-policy interface. A policy instance serves one sequence at a time: begin() resets
// it, then for every forward the runtime calls, per layer, observe() with the statistics the
// policy asked for in wants(), and compress() when the protocol says the budget must hold.
#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>

#include "policies/attention_stats.hpp"
#include "policies/budget.hpp"
#include "policies/layer_cache.hpp"
#include "policies/position_mode.hpp"

namespace kvbench::policies {

class ContextRescoring;  // policies/context_rescoring.hpp

enum class Phase {
  kPrefill,       // one forward over the whole prompt
  kPrefillBlock,  // one block of a streamed prompt
  kDecode,        // one generated token
};
const char* to_string(Phase phase);

struct SequenceInfo {
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t prompt_len = 0;
  int64_t budget = 0;  // tokens per KV head per layer, resolved (kUnlimitedTokens: "full")
  uint64_t seed = 0;
  // Given as kvpress's compression ratio ("ratio:<r>"): r, which PyramidKVPress's layer budgets
  // use unrounded.
  std::optional<double> compression_ratio;
  // How many of the prompt's last tokens are the question, in a query-aware prompt built for a
  // policy that names a query_delimiter() (kvpress's FinchPress window); 0: not given.
  int64_t query_tokens = 0;
  // The checkpoint as "<origin>|<dtype>|<device>", "" for a model built in memory: what a policy
  // computes from the model itself and keeps across prompts (DuoAttention's on-the-fly scores) is
  // keyed by it.
  std::string model;
  // No eviction. From 2^40 tokens on a budget counts as unlimited too: no sequence is that long,
  // and policies compute with smaller budgets (sums, products of strides) without overflow.
  bool unlimited() const { return budget >= (int64_t{1} << 40); }
};

class Policy {
 public:
  virtual ~Policy() = default;

  virtual std::string name() const = 0;
  virtual StatsRequest wants() const { return {}; }
  virtual PositionMode position_mode() const { return PositionMode::kOriginal; }
  // True when the policy never relies on slot order (only on the original positions that travel
  // with the slots): its caches then use SlotOrder::kAny, where eviction moves O(evicted) slots
  // instead of gathering the whole cache. Opt-in, default false (order-preserving keep()).
  virtual bool slot_order_free() const { return false; }
  // True when observe() keeps only what compress() of the same forward reads (a score row each
  // forward replaces: nothing accumulated, the cache untouched). A forward that does not compress —
  // a decoding step under oneshot, a question after compress-once — then needs neither the
  // statistics nor observe(): the runtime skips both, so the step takes the fused attention kernel
  // (split-K on CUDA). Opt-in; never with rescoring() (its compress() follows forwards that do not
  // compress). A wrapper says true only where its own observe() keeps nothing more than its inner
  // policy's or press's.
  virtual bool observes_only_to_compress() const { return false; }
  // Multiplier on the attention logits when n keys are attended (BUZZ with log n: eq. 7–8).
  virtual double logit_scale(int64_t n_keys) const { return 1.0; }

  virtual void begin(const SequenceInfo& info) { info_ = info; }
  virtual void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) {}
  // Evicts until every head of `cache` holds at most its budget.
  virtual void compress(int64_t layer, LayerCache& cache, Phase phase) = 0;

  // Tokens per KV head that `layer` may hold; PyramidKV and Ada-KV refine this.
  virtual int64_t layer_budget(int64_t layer) const { return info_.budget; }
  // A policy that scores the prompt with more forwards after its prefill (kvpress's KVCompose):
  // the session drives it (policies/context_rescoring.hpp). Null for every other policy; a
  // wrapper that forwards calls forwards this too.
  virtual ContextRescoring* rescoring() { return nullptr; }
  // The text a query-aware task puts between the context and the question for this policy
  // (kvpress's FinchPress: "<|finch_sep|>", a special token added to the tokenizer): the task then
  // tokenises the two apart, feeds them without it and hands the session the question's token
  // count (SequenceInfo::query_tokens). Empty for every other policy.
  virtual std::string query_delimiter() const { return {}; }
  const SequenceInfo& info() const { return info_; }

 protected:
  SequenceInfo info_;
};

}  // namespace kvbench::policies
