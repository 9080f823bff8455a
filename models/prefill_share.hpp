#pragma once
// One prefill for several sessions with the same prompt (the cells of a grid that differ only in
// a policy that compresses after the prefill). A prefill's forward does not depend on such a
// policy: each layer's attention output is computed from the full cache before the policy looks
// at it. So one forward over the full cache, keeping each layer's new keys and values and the
// statistics every session's policy asks for (each computed as attention computes it for that
// request alone), lets every session replay its own prefill: append the layer's keys, observe,
// compress — layer by layer, as the live forward calls them. The result is bit for bit the
// session's own prefill.
//
// Sessions share only while their threads take turns (harness/prefill_sharing.hpp): one thread
// runs at a time, and a session that meets a prompt first waits one round, and then until no
// session is mid-step in a batched decode, so that every other session with that prompt can say
// which statistics it needs, before the forward runs once.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "models/transformer.hpp"
#include "policies/attention_stats.hpp"

namespace kvbench::models {

// What one forward over a prompt leaves for the sessions that replay it.
struct SharedPrefill {
  torch::Tensor positions;                    // [T] original positions 0..T−1, on the model's device
  std::vector<torch::Tensor> keys, values;    // per layer: the model heads the forward appended
  std::vector<policies::StatsRequest> requests;            // the distinct requests served
  std::vector<std::vector<policies::AttentionStats>> stats;  // [request][layer], as attention gives them
  torch::Tensor logits;                       // [1, vocab], the last token's
  int64_t tokens() const { return positions.numel(); }
};

// Prompt tokens each thread's sessions prefilled by running the model (computed) and by replaying
// a forward another session ran (reused).
struct PrefillTokens {
  int64_t computed = 0;
  int64_t reused = 0;
};
PrefillTokens& prefill_tokens_of_this_thread();

class PrefillShare {
 public:
  // `yield` hands the turn to the next thread and returns when this thread's turn comes back.
  // `others_mid_step`: whether another session is inside a decoding step (models/decode_batch.hpp);
  // such a session may come to the same prompt next, so a new prompt's forward waits for it.
  explicit PrefillShare(std::function<void()> yield, std::function<bool()> others_mid_step = [] { return false; })
      : yield_(std::move(yield)), others_mid_step_(std::move(others_mid_step)) {}

  // The share this thread's sessions use (null: none).
  static PrefillShare* current();
  class Scope {  // makes `share` the current one of this thread while it lives
   public:
    explicit Scope(PrefillShare* share);
    ~Scope();
  };

  struct Use {
    std::shared_ptr<const SharedPrefill> prefill;
    size_t request = 0;  // index into prefill->requests
  };
  // The shared forward over `tokens` with `want` among its statistics, or nothing when this
  // session is the only one with the prompt (it then prefills alone). `fused`: the attention
  // path the session's own forward takes (fused_output(), after its request).
  std::optional<Use> acquire(const Transformer& model, const std::vector<int64_t>& tokens,
                             const policies::StatsRequest& want, bool fused);

 private:
  struct Entry;
  std::shared_ptr<Entry> find(const Transformer& model, const std::vector<int64_t>& tokens, bool fused) const;
  Use take(const std::shared_ptr<Entry>& entry, const policies::StatsRequest& want);
  void close(const std::shared_ptr<Entry>& entry);

  std::function<void()> yield_;
  std::function<bool()> others_mid_step_;
  std::vector<std::shared_ptr<Entry>> entries_;  // prompts met this round (few at a time)
};

// The forward of a shared prefill: the full cache, each layer's keys and values, and the
// statistics of every request (with the model-side fields they ask for).
std::shared_ptr<const SharedPrefill> compute_shared_prefill(const Transformer& model,
                                                            const std::vector<int64_t>& tokens,
                                                            const std::vector<policies::StatsRequest>& requests,
                                                            bool fused);

// A session's prefill from a shared forward: per layer, the forward's keys and values appended to
// `cache`, then the policy's observe and compress with its request's statistics — the calls the
// live forward makes, in its order, in InferenceMode as it. Returns the last token's logits.
torch::Tensor replay_shared_prefill(const SharedPrefill& prefill, size_t request, const std::vector<int64_t>& tokens,
                                    policies::Policy* policy, policies::KVCache& cache);

}  // namespace kvbench::models
