// PyramidKV (Cai, Zhang et al., "PyramidKV: Dynamic KV Cache Compression based on Pyramidal
// Information Funneling", 2024; reference code Zefan-Cai/PyramidKV pyramidkv_utils.py,
// PyramidKVCluster): SnapKV's scores (observation window, pooling, per-head top-k + window) with
// layer budgets decreasing linearly from the bottom layer (most) to the top layer (least), β = 20,
// observation window 8 (KVCache-Factory's LongBench runner: window_sizes = 8, kernel 7, maxpool):
// min = (C − w)/β, max = 2(C − w) − min, capacity[l] = max − l·(max − min)/(L − 1), plus the
// window (policies/pyramid_budgets.hpp for the reference's clamping and rounding). By default the
// reference's integer steps (`reference_rounding: true`, whose budgets can sum to more than L·C);
// `reference_rounding: false` apportions them to sum to exactly L·C. GQA (`gqa`): `repeat`
// (default: KVCache-Factory's default kv_cache_granularity query_head) or `reduce` (its kv_head
// mode). layer_budget(l) reports each layer's own budget.
#include <limits>
#include <vector>

#include "policies/pyramid_budgets.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"

namespace kvbench::policies {
namespace {

class PyramidKvPolicy : public ScoredPolicy {
 public:
  explicit PyramidKvPolicy(const nlohmann::json& p)
      : ScoredPolicy("pyramidkv", make_scorer("snapkv", p)),
        window_(p.at("window")),
        beta_(p.at("beta")),
        reference_rounding_(p.at("reference_rounding")) {}
  void begin(const SequenceInfo& info) override {
    ScoredPolicy::begin(info);
    budgets_.clear();
    if (info.unlimited() || info.n_layers < 1) return;
    const int64_t w = std::min(window_, info.budget);
    for (int64_t cap : pyramid_capacities(info.n_layers, info.budget - w, w, beta_, info.prompt_len, reference_rounding_))
      budgets_.push_back(cap + w);
  }
  int64_t layer_budget(int64_t layer) const override {
    if (layer < 0 || layer >= static_cast<int64_t>(budgets_.size())) return info_.budget;
    return budgets_[layer];
  }

 protected:
  // The observation window stays w; the pooled scores rank only the older tokens.
  int64_t recent_slots(int64_t budget) const override { return std::min(window_, budget); }

 private:
  int64_t window_, beta_;
  bool reference_rounding_;
  std::vector<int64_t> budgets_;
};

const PolicyRegistration registration({
    "pyramidkv",
    "SnapKV scoring with linearly decreasing per-layer budgets (pyramid)",
    "PyramidKV (Cai/Zhang et al. 2024; Zefan-Cai/PyramidKV PyramidKVCluster, beta 20)",
    {params::Param::integer("beta", 20, "the ratio of the bottom layer's budget to the top layer's", 1),
     params::Param::flag("reference_rounding", true, "the reference's integer steps (budgets may sum to more than L·C)")},
    [](const nlohmann::json& p) { return std::make_unique<PyramidKvPolicy>(p); },
    "",
    "snapkv",
    "",
    {{"window", 8}}});

}  // namespace
}  // namespace kvbench::policies
