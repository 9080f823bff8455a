// KeyDiffPress (Park et al., "KeyDiff: Key Similarity-Based KV Cache Eviction for Long-Context
// LLM Inference in Resource-Constrained Environments", 2025; kvpress/presses/keydiff_press.py): the
// anchor is the mean of the head's L2-normalised keys; a token's score is minus its key's cosine
// similarity to the anchor, so the most distinctive keys stay. The paper's block-wise eviction is
// kvpress's BlockPress around this press (kvpress:block_keydiff).
#include "policies/kvpress/press.hpp"

namespace kvbench::policies::kvpress {
namespace {

class KeyDiffPress : public Press {
 public:
  std::string name() const override { return "kvpress:keydiff"; }
  bool slot_order_free() const override { return true; }
  torch::Tensor scores(int64_t, LayerCache& cache, const torch::Tensor&) override {
    torch::Tensor keys = cache.keys().to(torch::kFloat32);
    torch::Tensor unit = torch::nn::functional::normalize(keys, torch::nn::functional::NormalizeFuncOptions().p(2).dim(-1));
    torch::Tensor anchor;
    if (cache.all_valid()) {
      anchor = unit.mean(1, /*keepdim=*/true);
    } else {  // a ragged head: the mean of its own tokens
      torch::Tensor valid = cache.valid().unsqueeze(-1).to(torch::kFloat32);
      anchor = (unit * valid).sum(1, true) / valid.sum(1, true).clamp_min(1);
    }
    return torch::cosine_similarity(keys, anchor, /*dim=*/-1, /*eps=*/1e-8).neg();
  }
};

const PressRegistration keydiff_registration({"keydiff", "Minus the cosine similarity of the key to the head's mean unit key",
                                              "Park et al. 2025 (arXiv 2504.15364); kvpress keydiff_press.py",
                                              {},
                                              [](const nlohmann::json&) { return std::make_unique<KeyDiffPress>(); },
                                              /*bare_name=*/true});

}  // namespace
}  // namespace kvbench::policies::kvpress
