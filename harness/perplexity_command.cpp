// `kvbench perplexity`: mean NLL of a text file, whole-text or streamed under eviction.
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "datasets/text_reader.hpp"
#include "harness/atomic_file.hpp"
#include "harness/command.hpp"
#include "harness/progress_bar.hpp"
#include "harness/runtime_options.hpp"
#include "models/perplexity.hpp"
#include "policies/registry.hpp"
#include "tokenizers/utf8_text.hpp"

namespace kvbench::harness {
namespace {

struct PerplexityArgs {
  ModelOptions model;
  PolicyOptions policy;
  std::string text_file;
  int64_t max_tokens = 0;
  bool stream = false;
  std::string curve;
  bool json = false;
};

// The most tokens `perplexity` can score: kMaxPositions, or fewer where the memory there is holds
// fewer (memory_need grows with the tokens).
int64_t scorable_tokens(const LoadedRuntime& rt, const models::SessionOptions& options) {
  const std::optional<MemoryRoom> room = memory_room(rt.transformer->device());
  auto fits = [&](int64_t tokens) {
    return !room || memory_need(rt.loaded.config, rt.transformer->dtype(), options, {tokens, 0, true}).total() <= room->bytes;
  };
  if (fits(kMaxPositions)) return kMaxPositions;
  int64_t low = 0, high = kMaxPositions;  // fits(low), !fits(high)
  while (high - low > 1) {
    const int64_t mid = low + (high - low) / 2;
    (fits(mid) ? low : high) = mid;
  }
  return low;
}

int run_perplexity(PerplexityArgs args) {
  require_positions(args.max_tokens, "--max-tokens " + std::to_string(args.max_tokens));
  const std::string text = datasets::read_text(args.text_file);
  // One rule for every tokenizer: refused here, naming the file (not "tokenizer input").
  models::utf8::require_valid(text, args.text_file);
  if (args.stream) args.policy.protocol = "stream";
  session_options(args.policy);  // budget and protocol checked before the load
  auto policy = policies::make_policy(args.policy.policy, args.policy.params_json());
  LoadedRuntime rt = load_runtime(args.model);
  const models::SessionOptions options = session_options(args.policy, rt);
  // Only a prefix is tokenized: --max-tokens, else one more token than can be scored (the bound
  // on positions, or what the memory holds), so a huge text is refused after a prefix of it.
  const int64_t cap = scorable_tokens(rt, options);
  const int64_t limit = args.max_tokens > 0 ? args.max_tokens : cap + 2;  // BOS + cap + 1 scored
  std::vector<int> encoded = models::encode_prefix(*rt.tokenizer, text, limit, /*add_special_tokens=*/true);
  if (encoded.size() < 2)
    throw std::invalid_argument(args.text_file + ": no text to score (the file is empty or encodes to no token)");
  std::vector<int64_t> tokens(encoded.begin(), encoded.end());
  const int64_t to_score = static_cast<int64_t>(tokens.size()) - 1;  // every token after BOS; each is fed but the last
  const bool cut = args.max_tokens == 0 && to_score > cap;  // the text has more than `cap` tokens to score
  const std::string what =
      args.text_file + ": scoring " + (cut ? "more than " + std::to_string(cap) : std::to_string(to_score)) + " tokens";
  require_positions(to_score, what + " (--max-tokens scores a prefix)");
  require_memory(memory_need(rt.loaded.config, rt.transformer->dtype(), options, {to_score, 0, true}),
                 rt.transformer->device(), what);
  const int64_t context = rt.loaded.config.max_seq_len;
  if (static_cast<int64_t>(tokens.size()) > context) {
    std::cerr << "kvbench perplexity: warning: " << args.text_file << " has " << tokens.size()
              << " tokens, more than the model's context of " << context << " (" << trained_context_field(rt.loaded)
              << "; positions beyond it were never trained, and the whole text is one "
              << (options.protocol == models::Protocol::kStream ? "stream" : "forward pass")
              << ", which takes long); --max-tokens " << context << " scores one context\n";
  }
  models::InferenceSession session(*rt.transformer, policy.get(), options);
  // A text longer than the context takes minutes: show how far it is (a bar on a terminal, a
  // line per step in a log) — per tenth of a stream, per layer of a one-shot forward.
  const int64_t fed = static_cast<int64_t>(tokens.size()) - 1;
  std::unique_ptr<ProgressBar> bar;
  if (fed > context && options.protocol == models::Protocol::kStream) {
    bar = std::make_unique<ProgressBar>(std::cerr, fed, ProgressBar::stderr_is_terminal());
    session.set_prefill_progress([&bar, last_tenth = int64_t{0}](int64_t done, int64_t total) mutable {
      bar->update(static_cast<double>(done), "tokens");
      const int64_t tenth = done * 10 / total;
      if (tenth > last_tenth && done < total) {
        last_tenth = tenth;
        bar->message("perplexity: " + std::to_string(done) + " of " + std::to_string(total) + " tokens streamed");
      }
    });
  } else if (fed > context) {
    const int64_t layers = rt.loaded.config.n_layers;
    bar = std::make_unique<ProgressBar>(std::cerr, layers, ProgressBar::stderr_is_terminal());
    models::CacheControl per_layer;
    per_layer.on_attention = [&bar, layers](int64_t layer, const torch::Tensor&, const torch::Tensor&,
                                            const torch::Tensor&, const torch::Tensor&, const torch::Tensor&) {
      bar->update(static_cast<double>(layer + 1), "layers");
      if (layer + 1 < layers)
        bar->message("perplexity: attention of layer " + std::to_string(layer + 1) + " of " + std::to_string(layers) +
                     " done");
    };
    session.set_inspector(per_layer);
  }
  models::PerplexityResult r = models::evaluate_perplexity(session, tokens);
  if (bar) bar->finish();
  if (!args.curve.empty()) {
    std::ostringstream curve;
    curve << "token_index\tnll\n" << std::setprecision(17);
    for (size_t i = 0; i < r.nll.size(); ++i) curve << i + 1 << "\t" << r.nll[i] << "\n";
    write_file_atomically(args.curve, curve.str());  // throws naming the path (a folder, say)
  }
  const int64_t scored = static_cast<int64_t>(r.nll.size());
  if (args.json) {
    nlohmann::json j = {{"tokens", scored}, {"mean_nll", r.mean_nll}, {"perplexity", r.perplexity},
                        {"max_cache_len", r.max_cache_len}};
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "tokens " << scored << "\nmean_nll " << std::setprecision(6) << r.mean_nll << "\nperplexity "
              << r.perplexity << "\nmax_cache_len " << r.max_cache_len << "\n";
  }
  return 0;
}

const CommandRegistration perplexity_registration(
    "perplexity", "Perplexity of a text file (BOS prepended; every token after BOS scored)", [](CLI::App& app) {
      auto args = std::make_shared<PerplexityArgs>();
      args->model.add_to(app);
      args->policy.add_to(app);
      app.add_option("--text-file", args->text_file, "UTF-8 text")->required();
      app.add_option("--max-tokens", args->max_tokens,
                     "truncate to this many tokens (BOS included; at most 2^24), tokenizing only a prefix of the "
                     "text; 0 = all")
          ->check(at_least(0));
      app.add_flag("--stream", args->stream, "token by token under eviction (the stream protocol)");
      app.add_option("--curve", args->curve, "write the per-token NLL curve (TSV) here");
      app.add_flag("--json", args->json, "print {tokens, mean_nll, perplexity, max_cache_len}");
      return [args] { return run_perplexity(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
