#include "tasks/engines/loglik_engine.hpp"
#include "models/job_clock.hpp"

#include <chrono>

namespace kvbench::tasks {

ChoiceScore score_continuation(const TaskContext& ctx, const std::string& context, const std::string& continuation) {
  std::vector<int> whole = ctx.tokenizer->encode(context + continuation, /*add_bos=*/true);
  std::vector<int> head = ctx.tokenizer->encode(context, /*add_bos=*/true);
  // Continuation tokens = whole minus the longest common prefix with the context's tokens.
  size_t split = 0;
  while (split < head.size() && split < whole.size() && head[split] == whole[split]) ++split;
  if (split >= whole.size()) split = whole.size() - 1;  // degenerate: score at least the last token
  if (split == 0) split = 1;                              // BOS is always context
  std::vector<int64_t> prompt(whole.begin(), whole.begin() + split);
  auto policy = ctx.make_policy();
  models::InferenceSession session(*ctx.model, policy.get(), ctx.session_options());
  auto t0 = models::JobClock::now();
  torch::Tensor logits = session.prefill(prompt).reshape({-1});
  auto t1 = models::JobClock::now();
  ChoiceScore score;
  for (size_t i = split; i < whole.size(); ++i) {
    // A broken checkpoint fails the job: NaN log-likelihoods compared as "not better" picked
    // choice 0, and acc came out as a plausible number.
    const torch::Tensor wide = logits.to(torch::kFloat64);
    models::require_finite_logits(*ctx.model, wide);
    torch::Tensor logp = torch::log_softmax(wide, 0);
    score.loglik += logp[whole[i]].item<double>();
    score.greedy = (i == split ? true : score.greedy) && logits.argmax().item<int64_t>() == whole[i];
    ++score.tokens;
    if (i + 1 < whole.size()) logits = session.step(whole[i]).reshape({-1});
  }
  ctx.meter->prefill_tokens += static_cast<int64_t>(prompt.size());
  ctx.meter->prefill_seconds += std::chrono::duration<double>(t1 - t0).count();
  ctx.meter->decode_tokens += score.tokens - 1;
  ctx.meter->decode_seconds += std::chrono::duration<double>(models::JobClock::now() - t1).count();
  ctx.meter->add_session(session);
  return score;
}

ChoiceResult choose(const TaskContext& ctx, const std::string& context, const std::vector<std::string>& choices) {
  ChoiceResult r;
  double best = -1e300, best_norm = -1e300;
  for (size_t i = 0; i < choices.size(); ++i) {
    r.scores.push_back(score_continuation(ctx, context, choices[i]));
    const double norm = r.scores.back().loglik / std::max<size_t>(1, choices[i].size());
    if (r.scores.back().loglik > best) best = r.scores.back().loglik, r.best = static_cast<int64_t>(i);
    if (norm > best_norm) best_norm = norm, r.best_normalized = static_cast<int64_t>(i);
  }
  return r;
}

}  // namespace kvbench::tasks
