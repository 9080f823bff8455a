#pragma once
// Runs one policy configuration on the real model under the three protocols (random prompt
// lengths, budgets and block sizes) and returns every time a head held more than
// layer_budget() right after compress(): the invariants test does this for the registry
// defaults, this probe does it for non-default parameters (grid points, ablations).
#include <random>
#include <string>
#include <vector>

#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "models/transformer.hpp"
#include "every_policy.hpp"
#include "policies/forwarding_policy.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies::testing {

class CheckedPolicy : public ForwardingPolicy {
 public:
  explicit CheckedPolicy(std::unique_ptr<Policy> inner) : ForwardingPolicy(std::move(inner)) {}
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    ForwardingPolicy::compress(layer, cache, phase);
    ++compressions;
    const int64_t budget = inner().layer_budget(layer), held = cache.max_head_length();
    if (held > budget)
      violations.push_back("layer " + std::to_string(layer) + " holds " + std::to_string(held) + " > " +
                           std::to_string(budget) + " (" + to_string(phase) + ")");
  }
  std::vector<std::string> violations;
  int64_t compressions = 0;
};

inline const models::Transformer& probe_model() {
  static const models::LoadedModel loaded = models::load_model("stories260K");
  static const models::Transformer model(loaded.config, loaded.weights);
  return model;
}

// "" when every compression respected the budget, else the first violation with its setting.
inline std::string first_budget_violation(const std::string& policy, const nlohmann::json& params, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 3; ++trial) {
    const int64_t length = 30 + static_cast<int64_t>(rng() % 60);
    models::SessionOptions options;
    options.text = kvbench::testing::stories_text();
    options.protocol = static_cast<models::Protocol>(trial % 3);
    options.block = 1 + static_cast<int64_t>(rng() % 7);
    options.budget = Budget::tokens(8 + static_cast<int64_t>(rng() % 30));
    options.seed = seed;
    CheckedPolicy checked(make_policy(policy, params));
    models::InferenceSession session(probe_model(), &checked, options);
    std::vector<int64_t> prompt{1};
    for (int64_t i = 1; i < length; ++i) prompt.push_back(3 + static_cast<int64_t>(rng() % 500));
    torch::Tensor logits = session.prefill(prompt);
    for (int step = 0; step < 5; ++step) logits = session.step(logits.reshape({-1}).argmax().item<int64_t>());
    if (checked.compressions == 0) return "no compression ran";
    if (!checked.violations.empty())
      return policy + " " + params.dump() + " protocol " + models::to_string(options.protocol) + " block " +
             std::to_string(options.block) + " budget " + options.budget.to_string() + ": " + checked.violations.front();
  }
  return "";
}

}  // namespace kvbench::policies::testing
