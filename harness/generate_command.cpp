// `kvbench generate`: a prompt's continuation under any policy, budget and protocol.
// Bounds (docs/harness.md): prompt + --max-new-tokens at most kMaxPositions, and the memory the
// cache will need checked before the model runs; past the model's trained context a warning
// (StreamingLLM-like policies are meant to go there) and the progress on stderr.
#include <iostream>
#include <memory>

#include "harness/command.hpp"
#include "harness/progress_bar.hpp"
#include "harness/runtime_options.hpp"
#include "models/generation.hpp"
#include "policies/registry.hpp"
#include "tokenizers/utf8_text.hpp"

namespace kvbench::harness {
namespace {

struct GenerateArgs {
  ModelOptions model;
  PolicyOptions policy;
  std::string prompt;
  int64_t max_new_tokens = 64;
  models::SamplingSettings sampling;
  bool json = false;
  bool stop_at_eos = true;
};

int run_generate(const GenerateArgs& args) {
  const std::string new_tokens = "--max-new-tokens " + std::to_string(args.max_new_tokens);
  require_positions(args.max_new_tokens, new_tokens);
  models::utf8::require_valid(args.prompt, "--prompt");  // the tokenizer would say "tokenizer input"
  LoadedRuntime rt = load_runtime(args.model);
  auto policy = policies::make_policy(args.policy.policy, args.policy.params_json());
  const models::SessionOptions options = session_options(args.policy, rt);
  std::vector<int> encoded = rt.tokenizer->encode(args.prompt, /*add_bos=*/true);
  std::vector<int64_t> prompt(encoded.begin(), encoded.end());
  const int64_t prompt_tokens = static_cast<int64_t>(prompt.size());
  const std::string request = "the prompt's " + std::to_string(prompt_tokens) + " tokens with " + new_tokens;
  require_positions(prompt_tokens + args.max_new_tokens, request);
  require_memory(memory_need(rt.loaded.config, rt.transformer->dtype(), options, {prompt_tokens, args.max_new_tokens, false}),
                 rt.transformer->device(), request);
  models::InferenceSession session(*rt.transformer, policy.get(), options);
  // Past the trained context: one warning when a position beyond it is fed (the prompt's own, or
  // a generated token's; under a cache-slot policy such as streaming_llm positions are cache
  // ranks, so only a cache that outgrows the context goes past), and the progress on stderr.
  const int64_t context = rt.loaded.config.max_seq_len;
  const bool cache_slots = policy->position_mode() == policies::PositionMode::kCacheSlot;
  auto warn = [&](const std::string& what) {
    std::cerr << "kvbench generate: warning: " << what << " more than the model's context of " << context << " ("
              << trained_context_field(rt.loaded) << "; positions beyond it were never trained)\n";
  };
  bool warned = prompt_tokens > context;
  if (warned) warn("the prompt's " + std::to_string(prompt_tokens) + " tokens are");
  std::unique_ptr<ProgressBar> bar;
  if (prompt_tokens + args.max_new_tokens > context && args.max_new_tokens > 0)
    bar = std::make_unique<ProgressBar>(std::cerr, args.max_new_tokens, ProgressBar::stderr_is_terminal());
  int64_t tenth = 0;
  models::GenerationOptions gen;
  gen.stop_when = [&](const std::vector<int64_t>& generated) {
    const int64_t n = static_cast<int64_t>(generated.size());
    if (!warned && n < args.max_new_tokens) {  // this token is fed: it takes the next position
      const int64_t position = cache_slots ? session.cache_len() : prompt_tokens + n - 1;
      if (position >= context) {
        warned = true;
        warn(cache_slots ? "the cache's " + std::to_string(position + 1) + " slots are"
                         : std::to_string(position + 1) + " positions (the prompt's " + std::to_string(prompt_tokens) +
                               " tokens and " + std::to_string(n) + " generated) are");
      }
    }
    if (bar) {
      bar->update(static_cast<double>(n), "tokens");
      if (n * 10 / args.max_new_tokens > tenth && n < args.max_new_tokens) {
        tenth = n * 10 / args.max_new_tokens;
        bar->message("generate: " + std::to_string(n) + " of " + std::to_string(args.max_new_tokens) + " tokens");
      }
    }
    return false;
  };
  gen.max_new_tokens = args.max_new_tokens;
  gen.sampling = args.sampling;
  gen.seed = args.policy.seed;
  if (args.stop_at_eos) gen.stop_ids.assign(rt.tokenizer->stop_ids().begin(), rt.tokenizer->stop_ids().end());
  models::GenerationResult out = models::generate(session, prompt, gen);
  if (bar) bar->finish();
  std::vector<int> ids(out.tokens.begin(), out.tokens.end());
  // Decode prompt+completion together so the boundary keeps sentencepiece's spacing.
  std::vector<int> all = rt.tokenizer->encode(args.prompt, /*add_special_tokens=*/false);
  all.insert(all.end(), ids.begin(), ids.end());
  const std::string completion = rt.tokenizer->decode(ids);
  if (args.json) {
    nlohmann::json j = {{"prompt", args.prompt},
                        {"completion", completion},
                        {"text", rt.tokenizer->decode(all)},
                        {"prompt_tokens", prompt},
                        {"generated_ids", out.tokens},
                        {"policy", args.policy.policy},
                        {"budget", args.policy.budget},
                        {"max_cache_len", session.max_cache_len()},
                        {"prefill_seconds", out.prefill_seconds},
                        {"decode_seconds", out.decode_seconds}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << rt.tokenizer->decode(all) << "\n";
  }
  return 0;
}

const CommandRegistration generate_registration(
    "generate", "Generate a continuation of a prompt (greedy at temperature 0)", [](CLI::App& app) {
      auto args = std::make_shared<GenerateArgs>();
      args->model.add_to(app);
      args->policy.add_to(app);
      app.add_option("--prompt", args->prompt, "prompt text (BOS is prepended)");
      app.add_option("--max-new-tokens", args->max_new_tokens,
                     "tokens to generate (prompt + new tokens at most 2^24 = 16777216 positions)")->capture_default_str()->check(at_least(0));
      // transformers' generate(): the processors in its order, one multinomial draw seeded by --seed.
      app.add_option("--temperature", args->sampling.temperature, "0 = greedy")->capture_default_str()->check(CLI::Range(0.0, 100.0));
      app.add_option("--top-k", args->sampling.top_k, "keep the k highest scores (0 = off)")->capture_default_str()->check(at_least(0));
      app.add_option("--top-p", args->sampling.top_p, "nucleus sampling mass, in [0, 1]")->capture_default_str()->check(CLI::Range(0.0, 1.0));
      app.add_option("--min-p", args->sampling.min_p, "drop tokens below min-p x the top probability (0 = off)")->capture_default_str()->check(CLI::Range(0.0, 1.0));
      app.add_option("--repetition-penalty", args->sampling.repetition_penalty, "divide (multiply if negative) the scores of seen ids (1 = off)")
          ->capture_default_str()->check(CLI::PositiveNumber);
      app.add_flag("--json", args->json, "print a JSON object");
      app.add_flag("!--no-stop-at-eos", args->stop_at_eos, "keep generating past EOS");
      return [args] { return run_generate(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
