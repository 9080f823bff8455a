#include "tasks/engines/generation_engine.hpp"

#include "models/generation.hpp"
#include "models/job_clock.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <stdexcept>

namespace kvbench::tasks {

nlohmann::json DecodingSettings::to_json() const {
  nlohmann::json j = {{"max_new_tokens", max_new_tokens}, {"stop_strings", stop_strings}, {"stop_at_eos", stop_at_eos},
                      {"stop_token_ids", stop_token_ids}, {"min_new_tokens", min_new_tokens}};
  j.update(sampling.to_json());
  return j;
}

std::vector<int64_t> encode_prompt(const TaskContext& ctx, const std::string& text) {
  return encode_prompt(ctx, text, true);
}

std::vector<int64_t> encode_prompt(const TaskContext& ctx, const std::string& text, bool add_special_tokens) {
  std::vector<int> ids = ctx.tokenizer->encode(text, add_special_tokens);
  return {ids.begin(), ids.end()};
}

namespace {
size_t first_stop(const std::string& text, const std::vector<std::string>& stops) {
  size_t cut = std::string::npos;
  for (const auto& s : stops) {
    size_t at = text.find(s);
    if (at != std::string::npos) cut = std::min(cut, at);
  }
  return cut;
}
}  // namespace

void meter_sequence(const TaskContext& ctx, models::InferenceSession& session, int64_t prompt_tokens,
                    const models::GenerationResult& out) {
  ctx.meter->prefill_tokens += prompt_tokens;
  ctx.meter->prefill_seconds += out.prefill_seconds;
  ctx.meter->decode_tokens += static_cast<int64_t>(out.tokens.size());
  ctx.meter->decode_seconds += out.decode_seconds;
  ctx.meter->add_session(session);
}

void require_greedy_stop_tokens(const DecodingSettings& decoding, const std::string& engine) {
  if (!decoding.sampling.greedy() || decoding.sampling.repetition_penalty != 1 || !decoding.stop_strings.empty() || decoding.min_new_tokens != 0)
    throw std::invalid_argument(engine + " decodes greedily with stop tokens only");
}

GreedyAnswer answer_greedily(const TaskContext& ctx, models::InferenceSession& session, torch::Tensor logits,
                             const DecodingSettings& decoding) {
  const auto t0 = models::JobClock::now();
  std::vector<int64_t> stops = decoding.stop_token_ids;
  if (decoding.stop_at_eos) stops.push_back(ctx.tokenizer->eos_id());
  GreedyAnswer answer;
  for (int64_t i = 0; i < decoding.max_new_tokens; ++i) {
    const int64_t next = logits.reshape({-1}).argmax().item<int64_t>();
    if (std::find(stops.begin(), stops.end(), next) != stops.end()) {
      answer.stopped = true;
      break;
    }
    answer.result.tokens.push_back(next);
    if (i + 1 == decoding.max_new_tokens) break;
    logits = session.step(next);
  }
  answer.result.decode_seconds = std::chrono::duration<double>(models::JobClock::now() - t0).count();
  return answer;
}

struct CompressOnce::Held {
  std::unique_ptr<policies::Policy> policy;
  std::unique_ptr<models::InferenceSession> session;
  std::vector<int64_t> context;
  int64_t query_tokens = 0;
  models::InferenceSession::Checkpoint compressed;  // the cache right after the context
  torch::Tensor logits;                               // what the context's last token predicts
};

CompressOnce::CompressOnce(const TaskContext& ctx) : ctx_(ctx) {}
CompressOnce::~CompressOnce() = default;

Completion CompressOnce::answer(const std::vector<int64_t>& context, const std::vector<int64_t>& question,
                                const DecodingSettings& decoding, int64_t query_tokens) {
  require_greedy_stop_tokens(decoding, "kvpress's pipeline");
  using clock = models::JobClock;
  const models::SessionOptions options = ctx_.session_options();
  const bool reuse = held_ && held_->context == context && held_->query_tokens == query_tokens &&
                     options.protocol == models::Protocol::kOneShot && !ctx_.observer;
  auto t0 = clock::now();
  if (!reuse) {
    held_ = std::make_unique<Held>();
    held_->policy = ctx_.make_policy();
    held_->session = std::make_unique<models::InferenceSession>(*ctx_.model, held_->policy.get(), options);
    held_->context = context;
    held_->query_tokens = query_tokens;
    if (ctx_.observer) ctx_.observer->begin(*held_->session, static_cast<int64_t>(context.size() + question.size()));
    held_->logits = held_->session->prefill(context, false, query_tokens).squeeze(0).clone();
    held_->compressed = held_->session->checkpoint();
    ++prefills_;
  }
  models::InferenceSession& session = *held_->session;
  const int64_t fed = (reuse ? 0 : static_cast<int64_t>(context.size())) + static_cast<int64_t>(question.size());
  torch::Tensor logits = held_->logits;
  for (int64_t id : question) logits = session.step(id);
  const double prefill_seconds = std::chrono::duration<double>(clock::now() - t0).count();
  models::GenerationResult out = answer_greedily(ctx_, session, logits, decoding).result;
  out.prefill_seconds = prefill_seconds;
  const int64_t prompt_tokens = static_cast<int64_t>(context.size() + question.size());
  if (ctx_.observer) ctx_.observer->end(session, prompt_tokens);
  meter_sequence(ctx_, session, fed, out);
  const int64_t cache_peak = session.max_cache_len();  // over the held session's life
  if (options.protocol == models::Protocol::kOneShot) session.rollback(held_->compressed);
  else held_.reset();  // the answer evicted: the next question prefills again
  Completion c;
  c.tokens = out.tokens;
  c.prompt_tokens = prompt_tokens;
  c.cache_peak = cache_peak;
  c.text = ctx_.tokenizer->decode({out.tokens.begin(), out.tokens.end()});
  return c;
}

std::vector<size_t> run_order(size_t n, const std::function<const std::vector<int64_t>&(size_t)>& context_of, bool group) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  if (!group) return order;
  auto less = [](const std::vector<int64_t>* a, const std::vector<int64_t>* b) { return *a < *b; };
  std::map<const std::vector<int64_t>*, size_t, decltype(less)> group_of(less);  // context -> group, by first appearance
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < n; ++i) {
    auto [it, fresh] = group_of.emplace(&context_of(i), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  order.clear();
  for (const auto& g : groups) order.insert(order.end(), g.begin(), g.end());
  return order;
}

Completion complete(const TaskContext& ctx, const std::vector<int64_t>& prompt, const DecodingSettings& decoding) {
  auto policy = ctx.make_policy();
  models::InferenceSession session(*ctx.model, policy.get(), ctx.session_options());
  models::GenerationOptions options;
  options.max_new_tokens = decoding.max_new_tokens;
  options.sampling = decoding.sampling;
  options.seed = ctx.seed;
  if (decoding.stop_at_eos) options.stop_ids.assign(ctx.tokenizer->stop_ids().begin(), ctx.tokenizer->stop_ids().end());
  options.stop_ids.insert(options.stop_ids.end(), decoding.stop_token_ids.begin(), decoding.stop_token_ids.end());
  options.min_new_tokens = decoding.min_new_tokens;
  const models::Tokenizer* tok = ctx.tokenizer;
  if (!decoding.stop_strings.empty()) {
    options.stop_when = [tok, &decoding](const std::vector<int64_t>& generated) {
      return first_stop(tok->decode({generated.begin(), generated.end()}, true), decoding.stop_strings) != std::string::npos;
    };
  }
  const int64_t prompt_tokens = static_cast<int64_t>(prompt.size());
  if (ctx.observer) ctx.observer->begin(session, prompt_tokens);
  models::GenerationResult out = models::generate(session, prompt, options);
  if (ctx.observer) ctx.observer->end(session, prompt_tokens);
  meter_sequence(ctx, session, static_cast<int64_t>(prompt.size()), out);
  Completion c;
  c.tokens = out.tokens;
  c.prompt_tokens = static_cast<int64_t>(prompt.size());
  c.cache_peak = session.max_cache_len();
  // pred.py: tokenizer.decode(output, skip_special_tokens=True).
  c.text = ctx.tokenizer->decode({out.tokens.begin(), out.tokens.end()}, /*skip_special_tokens=*/true);
  const size_t cut = first_stop(c.text, decoding.stop_strings);
  if (cut != std::string::npos) c.text = c.text.substr(0, cut);
  return c;
}

}  // namespace kvbench::tasks
