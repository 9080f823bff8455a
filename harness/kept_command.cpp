// `kvbench kept`: which tokens a policy keeps. The text's tokens are fed as a prompt under the
// policy, budget and protocol given; then every layer's cache is read: per head, the original
// positions it holds. --json prints {"ids": [token ids fed], "layers": [[positions of head 0,
// ascending], [head 1], ...] per layer} (heads as the cache stores them: KV heads, or the query
// heads of a policy that repeats K/V); else a per-layer summary; --html writes the text shaded by
// how many heads keep each token.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>

#include "datasets/text_reader.hpp"
#include "harness/atomic_file.hpp"
#include "harness/command.hpp"
#include "harness/kept_page.hpp"
#include "harness/runtime_options.hpp"
#include "models/perplexity.hpp"
#include "policies/registry.hpp"
#include "tokenizers/utf8_text.hpp"

namespace kvbench::harness {
namespace {

struct KeptArgs {
  ModelOptions model;
  PolicyOptions policy;
  std::string text_file;
  int64_t max_tokens = 0;
  bool json = false;
  std::string html;
};

// Per layer, per stored head: the original positions held, ascending.
using KeptPositions = std::vector<std::vector<std::vector<int64_t>>>;

KeptPositions kept_positions(policies::KVCache& cache) {
  KeptPositions layers;
  for (int64_t l = 0; l < cache.n_layers(); ++l) {
    const policies::LayerCache& layer = cache.layer(l);
    const torch::Tensor positions = layer.positions().to(torch::kCPU);
    const torch::Tensor valid =
        (layer.all_valid() ? torch::ones({layer.kv_heads(), layer.size()}, torch::kBool) : layer.valid()).to(torch::kCPU);
    const auto is_valid = valid.accessor<bool, 2>();
    std::vector<std::vector<int64_t>> heads(layer.kv_heads());
    for (int64_t h = 0; h < layer.kv_heads(); ++h) {
      const torch::Tensor row = positions[positions.size(0) == 1 ? 0 : h];
      const auto pos = row.accessor<int64_t, 1>();
      for (int64_t j = 0; j < layer.size(); ++j)
        if (is_valid[h][j]) heads[h].push_back(pos[j]);
      std::sort(heads[h].begin(), heads[h].end());
    }
    layers.push_back(std::move(heads));
  }
  return layers;
}

// Per layer, per token: the share of the layer's stored heads that keep it.
std::vector<std::vector<double>> kept_shares(const KeptPositions& kept, size_t tokens) {
  std::vector<std::vector<double>> shares;
  for (const auto& heads : kept) {
    std::vector<double> share(tokens, 0.0);
    for (const auto& head : heads)
      for (int64_t p : head)
        if (p >= 0 && static_cast<size_t>(p) < tokens) share[p] += 1.0 / static_cast<double>(heads.size());
    shares.push_back(std::move(share));
  }
  return shares;
}

void print_summary(const KeptPositions& kept, size_t tokens, std::ostream& out) {
  out << tokens << " tokens fed\n";
  for (size_t l = 0; l < kept.size(); ++l) {
    size_t least = tokens, most = 0, total = 0;
    for (const auto& head : kept[l]) {
      least = std::min(least, head.size());
      most = std::max(most, head.size());
      total += head.size();
    }
    const std::vector<double> share = kept_shares({kept[l]}, tokens)[0];
    const auto by_all = std::count_if(share.begin(), share.end(), [](double s) { return s > 1 - 1e-9; });
    const auto by_none = std::count(share.begin(), share.end(), 0.0);
    out << "layer " << l << ": " << kept[l].size() << " heads keep " << least;
    if (most != least) out << " to " << most;
    out << " tokens (mean " << std::fixed << std::setprecision(1) << static_cast<double>(total) / kept[l].size()
        << std::defaultfloat << "); " << by_all << " kept by every head, " << by_none << " by none\n";
  }
}

// How a token reads on the page: sentencepiece's word mark and GPT-2's byte-level space as spaces.
std::string display_text(const models::Tokenizer& tokenizer, int id) {
  std::string piece = tokenizer.piece(id);
  for (const std::string mark : {"\xE2\x96\x81", "\xC4\xA0"}) {
    for (size_t at = piece.find(mark); at != std::string::npos; at = piece.find(mark, at + 1)) piece.replace(at, mark.size(), " ");
  }
  return piece;
}

int run_kept(const KeptArgs& args) {
  require_positions(args.max_tokens, "--max-tokens " + std::to_string(args.max_tokens));
  const std::string text = datasets::read_text(args.text_file);
  models::utf8::require_valid(text, args.text_file);
  session_options(args.policy);  // budget and protocol checked before the load
  auto policy = policies::make_policy(args.policy.policy, args.policy.params_json());
  LoadedRuntime rt = load_runtime(args.model);
  const models::SessionOptions options = session_options(args.policy, rt);
  const int64_t limit = args.max_tokens > 0 ? args.max_tokens : kMaxPositions + 1;
  std::vector<int> encoded = models::encode_prefix(*rt.tokenizer, text, limit, /*add_special_tokens=*/true);
  if (encoded.empty()) throw std::invalid_argument(args.text_file + ": no text (the file encodes to no token)");
  const std::string what = args.text_file + ": " + std::to_string(encoded.size()) + " tokens";
  require_positions(static_cast<int64_t>(encoded.size()), what + " (--max-tokens feeds a prefix)");
  require_memory(memory_need(rt.loaded.config, rt.transformer->dtype(), options, {static_cast<int64_t>(encoded.size()), 0, false}),
                 rt.transformer->device(), what);
  std::vector<int64_t> ids(encoded.begin(), encoded.end());
  models::InferenceSession session(*rt.transformer, policy.get(), options);
  session.prefill(ids);
  const KeptPositions kept = kept_positions(session.cache());

  if (!args.html.empty()) {
    KeptView view;
    view.title = args.policy.policy + " at budget " + args.policy.budget + " (" + args.policy.protocol + ") on " + args.model.model;
    for (int id : encoded) view.tokens.push_back(display_text(*rt.tokenizer, id));
    view.kept_share = kept_shares(kept, ids.size());
    write_file_atomically(args.html, kept_page(view));
  }
  if (args.json) {
    std::cout << nlohmann::json{{"ids", ids}, {"layers", kept}}.dump() << "\n";
  } else {
    print_summary(kept, ids.size(), std::cout);
  }
  return 0;
}

const CommandRegistration kept_registration(
    "kept", "Which tokens a policy keeps: per layer and head, after the text is fed as a prompt", [](CLI::App& app) {
      auto args = std::make_shared<KeptArgs>();
      args->model.add_to(app);
      args->policy.add_to(app);
      app.add_option("--text-file", args->text_file, "UTF-8 text, fed as the prompt (BOS prepended)")->required();
      app.add_option("--max-tokens", args->max_tokens, "feed only this many tokens (BOS included); 0 = all")
          ->check(at_least(0));
      app.add_flag("--json", args->json, "print {\"ids\": [...], \"layers\": [[kept positions per head] per layer]}");
      app.add_option("--html", args->html, "write the text shaded by the share of heads keeping each token, one row per layer");
      return [args] { return run_kept(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
