// AdaKVPress (Feng et al., "Ada-KV", 2024; kvpress/presses/adakv_press.py): head-adaptive
// budgets around any press. Per layer with H KV heads and budget B per head: each head's
// int(B·alpha_safeguard) best tokens are safe (scored +max, as the press's protected window), then
// the H·(n − B) lowest scores of the whole layer are evicted, wherever they fall — a head whose
// scores are spread keeps more than one whose mass is concentrated. kvpress masks the evicted
// keys in attention; kvbench evicts them (ragged heads). kvbench's bare `adakv` follows FFY0/AdaKV
// (its floor α·b + (1 − α)·c_i per head, pyramids, rounding) instead.
#include <cfloat>
#include <cmath>

#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

class AdaKvPress : public WrapperPolicy {
 public:
  AdaKvPress(std::string name, std::unique_ptr<SlotScorer> wrapped, const nlohmann::json& p)
      : WrapperPolicy(std::move(name), std::move(wrapped)), alpha_(p.at("alpha_safeguard")) {}
  // Its observe() is the press's alone (WrapperPolicy's).
  bool observes_only_to_compress() const override { return press().observes_only_to_compress(); }

  int64_t layer_budget(int64_t) const override { return ada_head_capacity(info_, alpha_); }

  void compress(int64_t layer, LayerCache& cache, Phase) override {
    const int64_t budget = std::max<int64_t>(1, info_.budget), heads = cache.kv_heads(), n = cache.size();
    const torch::Tensor counts = valid_counts(cache);
    const int64_t total = counts.sum().item<int64_t>();
    if (total <= heads * budget) return;
    const torch::Tensor window = newest_valid(cache, std::min(budget, press().recent(budget)));
    torch::Tensor scores = press().scores(layer, cache, window).to(torch::kCPU, torch::kFloat32).expand({heads, n}).clone();
    torch::Tensor valid = cache.all_valid() ? torch::ones({heads, n}, torch::kBool) : cache.valid().to(torch::kCPU);
    scores.masked_fill_(window.to(torch::kCPU), FLT_MAX);
    scores.masked_fill_(valid.logical_not(), -INFINITY);
    scores.masked_fill_(top_k_mask(scores, std::min(ada_safe(budget, alpha_), n)), FLT_MAX);
    // The layer keeps its H·B best scores, whichever heads they belong to.
    const torch::Tensor kept = top_k_mask(scores.reshape({1, heads * n}), heads * budget).reshape({heads, n}).sum(1);
    const torch::Tensor surplus = counts - kept;
    const int64_t most = surplus.max().item<int64_t>();
    if (most <= 0) return;
    torch::Tensor victims = lowest_scored_slots(scores.masked_fill(valid.logical_not(), INFINITY),
                                                cache.positions().to(torch::kCPU), most, /*lowest_first=*/true);
    cache.evict(victims, surplus);
  }

 private:
  double alpha_;
};


const PolicyRegistration adakv_registration(
    {"kvpress:adakv", "Head-adaptive budgets: the layer's lowest scores evicted across heads, a safeguard per head",
     "Feng et al. 2024 (arXiv 2407.11550); kvpress adakv_press.py",
     {params::Param::text("press", "kvpress:snapkv", "the registered press whose scores are allocated (its parameters join these)"),
      alpha_safeguard_param()},
     [](const nlohmann::json& p) {
       return std::make_unique<AdaKvPress>("kvpress:adakv", make_scorer(p.at("press"), p), p);
     },
     kAdaReadsDevice, "", "press"});

const PolicyRegistration adakv_snapkv_registration(
    {"kvpress:adakv_snapkv", "AdaKVPress(SnapKVPress()): kvpress:adakv around kvpress:snapkv",
     "Feng et al. 2024; kvpress adakv_press.py, snapkv_press.py (PRESS_REGISTRY adakv_snapkv)",
     {alpha_safeguard_param()},
     [](const nlohmann::json& p) {
       return std::make_unique<AdaKvPress>("kvpress:adakv_snapkv", make_scorer("kvpress:snapkv", p), p);
     },
     kAdaReadsDevice, "kvpress:snapkv"});

const PolicyRegistration adakv_compactor_registration(
    {"kvpress:adakv_compactor", "AdaKVPress(CompactorPress()): kvpress:adakv around kvpress:compactor",
     "Feng et al. 2024; Chari & Van Durme 2025; kvpress adakv_press.py, compactor_press.py (PRESS_REGISTRY adakv_compactor)",
     {alpha_safeguard_param()},
     [](const nlohmann::json& p) {
       return std::make_unique<AdaKvPress>("kvpress:adakv_compactor", make_scorer("kvpress:compactor", p), p);
     },
     kAdaReadsDevice, "kvpress:compactor"});

const PolicyRegistration adakv_expected_attention_registration(
    {"kvpress:expected_attention", "AdaKVPress(ExpectedAttentionPress(epsilon=1e-2)): kvpress:adakv around expected_attention",
     "Devoto et al. 2025; kvpress adakv_press.py, expected_attention_press.py (PRESS_REGISTRY expected_attention)",
     {alpha_safeguard_param()},
     [](const nlohmann::json& p) {
       return std::make_unique<AdaKvPress>("kvpress:expected_attention", make_scorer("expected_attention", p), p);
     },
     kAdaReadsDevice, "expected_attention", "", {{"epsilon", 1e-2}}});

}  // namespace
}  // namespace kvbench::policies::kvpress
