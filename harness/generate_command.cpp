// `kvbench generate`: a prompt's continuation under any policy, budget and protocol.
#include <iostream>

#include "harness/command.hpp"
#include "harness/runtime_options.hpp"
#include "models/generation.hpp"
#include "policies/registry.hpp"

namespace kvbench::harness {
namespace {

struct GenerateArgs {
  ModelOptions model;
  PolicyOptions policy;
  std::string prompt;
  int64_t max_new_tokens = 64;
  double temperature = 0;
  double top_p = 1;
  bool json = false;
  bool stop_at_eos = true;
};

int run_generate(const GenerateArgs& args) {
  LoadedRuntime rt = load_runtime(args.model);
  auto policy = policies::make_policy(args.policy.policy, args.policy.params_json());
  models::InferenceSession session(*rt.transformer, policy.get(), session_options(args.policy));
  std::vector<int> encoded = rt.tokenizer->encode(args.prompt, /*add_bos=*/true);
  std::vector<int64_t> prompt(encoded.begin(), encoded.end());
  models::GenerationOptions gen;
  gen.max_new_tokens = args.max_new_tokens;
  gen.temperature = args.temperature;
  gen.top_p = args.top_p;
  gen.seed = args.policy.seed;
  if (args.stop_at_eos) gen.stop_ids.assign(rt.tokenizer->stop_ids().begin(), rt.tokenizer->stop_ids().end());
  models::GenerationResult out = models::generate(session, prompt, gen);
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

const CommandRegistration registration(
    "generate", "Generate a continuation of a prompt (greedy at temperature 0)", [](CLI::App& app) {
      auto args = std::make_shared<GenerateArgs>();
      args->model.add_to(app);
      args->policy.add_to(app);
      app.add_option("--prompt", args->prompt, "prompt text (BOS is prepended)");
      app.add_option("--max-new-tokens", args->max_new_tokens, "tokens to generate")->capture_default_str()->check(at_least(0));
      app.add_option("--temperature", args->temperature, "0 = greedy")->capture_default_str()->check(CLI::Range(0.0, 100.0));
      app.add_option("--top-p", args->top_p, "nucleus sampling mass, in (0, 1]")->capture_default_str()->check(CLI::Range(1e-9, 1.0));
      app.add_flag("--json", args->json, "print a JSON object");
      app.add_flag("!--no-stop-at-eos", args->stop_at_eos, "keep generating past EOS");
      return [args] { return run_generate(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
