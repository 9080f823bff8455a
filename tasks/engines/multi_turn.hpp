#pragma once
// One conversation on one cache (SCBench's multi-turn and multi-request protocols, microsoft/
// MInference scbench/eval_utils.py GreedySearch.test / test_scdq): the first prompt is prefilled
// under the job's protocol; every later prompt is fed after the cache as it stands (a prefill
// block, compressed as the protocol compresses prompts) — the shared context is never prefilled
// again. Each answer is greedy up to the turn's limit, stopping at EOS or the stop ids. The answer's
// tokens then either leave the cache again (`keep_answer` false: SCBench's gold history, whose next
// prompt carries the gold answer; its temporary decode cache) or stay, with EOS after them, before
// the next prompt (the model's own history, SCBench's --disable_golden_context).
#include <memory>
#include <vector>

#include "tasks/engines/generation_engine.hpp"

namespace kvbench::tasks {

class Conversation {
 public:
  explicit Conversation(const TaskContext& ctx);
  ~Conversation();
  // Feeds `prompt` (the first: a prefill) and answers. Dropping an answer needs a cache the policy
  // did not evict from while answering (std::invalid_argument naming the way out otherwise).
  Completion turn(const std::vector<int64_t>& prompt, const DecodingSettings& decoding, bool keep_answer);
  // The tokens fed in prefills (the first prompt's only: later prompts extend the cache).
  int64_t prefilled_tokens() const { return prefilled_tokens_; }

 private:
  struct Held;
  const TaskContext& ctx_;
  std::unique_ptr<Held> held_;
  std::vector<int64_t> pending_;  // fed before the next prompt: a kept answer's unfed tail and EOS
  int64_t prefilled_tokens_ = 0;
};

}  // namespace kvbench::tasks
