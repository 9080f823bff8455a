#include "tasks/engines/multi_turn.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "models/generation.hpp"
#include "models/inference_session.hpp"
#include "models/job_clock.hpp"

namespace kvbench::tasks {

struct Conversation::Held {
  std::unique_ptr<policies::Policy> policy;
  std::unique_ptr<models::InferenceSession> session;
};

Conversation::Conversation(const TaskContext& ctx) : ctx_(ctx) {
  if (ctx_.observer) throw std::invalid_argument("a multi-turn conversation takes no session observer");
}
Conversation::~Conversation() = default;

Completion Conversation::turn(const std::vector<int64_t>& prompt_in, const DecodingSettings& decoding, bool keep_answer) {
  require_greedy_stop_tokens(decoding, "a multi-turn conversation");
  using clock = models::JobClock;
  std::vector<int64_t> prompt = pending_;
  prompt.insert(prompt.end(), prompt_in.begin(), prompt_in.end());
  pending_.clear();
  const auto t0 = clock::now();
  torch::Tensor logits;
  if (!held_) {
    held_ = std::make_unique<Held>();
    held_->policy = ctx_.make_policy();
    held_->session = std::make_unique<models::InferenceSession>(*ctx_.model, held_->policy.get(), ctx_.session_options());
    logits = held_->session->prefill(prompt);
    prefilled_tokens_ += static_cast<int64_t>(prompt.size());
  } else {
    logits = held_->session->extend(prompt);
  }
  models::InferenceSession& session = *held_->session;
  const models::InferenceSession::Checkpoint before_answer = session.checkpoint();
  const auto t1 = clock::now();

  const GreedyAnswer answer = answer_greedily(ctx_, session, logits, decoding);
  models::GenerationResult out = answer.result;
  out.prefill_seconds = std::chrono::duration<double>(t1 - t0).count();
  meter_sequence(ctx_, session, static_cast<int64_t>(prompt.size()), out);

  Completion c;
  c.tokens = out.tokens;
  c.prompt_tokens = static_cast<int64_t>(prompt.size());
  c.cache_peak = session.max_cache_len();
  c.text = ctx_.tokenizer->decode({out.tokens.begin(), out.tokens.end()});
  if (keep_answer) {
    // The answer stays; what was not fed of it (the last token when the limit cut it) and EOS
    // come before the next prompt.
    if (!answer.stopped && !out.tokens.empty()) pending_.push_back(out.tokens.back());
    pending_.push_back(ctx_.tokenizer->eos_id());
  } else {
    try {
      session.rollback(before_answer);
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("the gold history drops each answer from the cache, but the policy evicted while "
                                              "answering (") + e.what() +
                                  "): run under the oneshot protocol, or keep the model's own answers");
    }
  }
  return c;
}

}  // namespace kvbench::tasks
