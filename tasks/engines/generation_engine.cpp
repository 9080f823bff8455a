#include "tasks/engines/generation_engine.hpp"

#include "models/generation.hpp"

namespace kvbench::tasks {

nlohmann::json DecodingSettings::to_json() const {
  return {{"max_new_tokens", max_new_tokens}, {"stop_strings", stop_strings}, {"stop_at_eos", stop_at_eos},
          {"stop_token_ids", stop_token_ids}, {"min_new_tokens", min_new_tokens},
          {"temperature", temperature},       {"top_p", top_p},               {"decoding", temperature == 0 ? "greedy" : "sampling"}};
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

Completion complete(const TaskContext& ctx, const std::vector<int64_t>& prompt, const DecodingSettings& decoding) {
  auto policy = ctx.make_policy();
  models::InferenceSession session(*ctx.model, policy.get(), ctx.session_options());
  models::GenerationOptions options;
  options.max_new_tokens = decoding.max_new_tokens;
  options.temperature = decoding.temperature;
  options.top_p = decoding.top_p;
  options.seed = ctx.seed;
  if (decoding.stop_at_eos) options.stop_ids = {ctx.tokenizer->eos_id()};
  options.stop_ids.insert(options.stop_ids.end(), decoding.stop_token_ids.begin(), decoding.stop_token_ids.end());
  options.min_new_tokens = decoding.min_new_tokens;
  const models::Tokenizer* tok = ctx.tokenizer;
  if (!decoding.stop_strings.empty()) {
    options.stop_when = [tok, &decoding](const std::vector<int64_t>& generated) {
      return first_stop(tok->decode({generated.begin(), generated.end()}), decoding.stop_strings) != std::string::npos;
    };
  }
  const int64_t prompt_tokens = static_cast<int64_t>(prompt.size());
  if (ctx.observer) ctx.observer->begin(session, prompt_tokens);
  models::GenerationResult out = models::generate(session, prompt, options);
  if (ctx.observer) ctx.observer->end(session, prompt_tokens);
  ctx.meter->prefill_tokens += static_cast<int64_t>(prompt.size());
  ctx.meter->prefill_seconds += out.prefill_seconds;
  ctx.meter->decode_tokens += static_cast<int64_t>(out.tokens.size());
  ctx.meter->decode_seconds += out.decode_seconds;
  ctx.meter->add_session(session);
  Completion c;
  c.tokens = out.tokens;
  c.prompt_tokens = static_cast<int64_t>(prompt.size());
  c.text = ctx.tokenizer->decode({out.tokens.begin(), out.tokens.end()});
  const size_t cut = first_stop(c.text, decoding.stop_strings);
  if (cut != std::string::npos) c.text = c.text.substr(0, cut);
  return c;
}

}  // namespace kvbench::tasks
