#include "tasks/task.hpp"

#include "policies/budget.hpp"
#include "policies/registry.hpp"
#include "tasks/kvpress_prompt.hpp"

namespace kvbench::tasks {

std::unique_ptr<policies::Policy> TaskContext::make_policy() const {
  return policies::make_policy(policy_name, policy_params);
}

models::SessionOptions TaskContext::session_options() const {
  models::SessionOptions s;
  s.protocol = models::parse_protocol(protocol);
  s.block = block;
  s.budget = policies::Budget::parse(budget);
  s.seed = seed;
  if (tokenizer) s.text = model_prompt_text(*tokenizer);
  return s;
}

TaskContext TaskContext::with_full_cache() const {
  TaskContext full = *this;
  full.policy_name = "full";
  full.policy_params = nlohmann::json::object();
  full.budget = "full";
  return full;
}

}  // namespace kvbench::tasks

namespace kvbench::tasks {

void RunMeter::add_session(const models::InferenceSession& session) {
  kv_logical_bytes_peak = std::max(kv_logical_bytes_peak, session.peak_logical_bytes());
  kv_allocated_bytes_peak = std::max(kv_allocated_bytes_peak, session.peak_allocated_bytes());
  max_cache_len = std::max(max_cache_len, session.max_cache_len());
}

nlohmann::json RunMeter::timings() const {
  auto rate = [](int64_t tokens, double seconds) { return seconds > 0 ? tokens / seconds : 0.0; };
  return {{"prefill_tokens", prefill_tokens},
          {"prefill_seconds", prefill_seconds},
          {"prefill_tokens_per_s", rate(prefill_tokens, prefill_seconds)},
          {"decode_tokens", decode_tokens},
          {"decode_seconds", decode_seconds},
          {"decode_tokens_per_s", rate(decode_tokens, decode_seconds)}};
}

}  // namespace kvbench::tasks
