// Ada-KV (Feng et al., "Ada-KV: Optimizing KV Cache Eviction by Adaptive Budget Allocation for
// Efficient LLM Inference", 2024, Alg. 1; reference code FFY0/AdaKV
// adaptive_snapkv/monkeypatch/snapkv_utils.py, AdaptiveSnapKVCluster): head-adaptive budget
// allocation around any scorer (`scorer`: snapkv default, h2o, tova, scissorhands). Per layer,
// with H KV heads, window w (the scorer's protected recent tokens) and b = B − w:
//  1. every head's scores over its tokens outside the window are pooled into one list and the top
//     H·b are selected; c_i = how many of them belong to head i (a dispersed head, whose mass is
//     spread over many tokens, wins slots from a concentrated one);
//  2. safeguard: head i gets α·b + (1 − α)·c_i tokens (α = floor_alpha = 0.2 as in the code), so
//     every head keeps at least α·b;
//  3. each head keeps its own top-capacity tokens plus the window: heads are ragged
//     (LayerCache::evict with counts: each head evicts its lowest-scored tokens beyond its
//     capacity; under SlotOrder::kAny that moves O(evicted) slots) and the layer's total stays H·B.
// The reference takes ⌊α·b⌋ and rounds each head separately (round half to even, as torch.round):
// c_i·(1 − α) + ⌊α·b⌋, so its total can differ from H·b by a few tokens; that is the default
// (`reference_rounding: true`); `false` apportions by largest remainder so the total is exactly
// H·b. GQA (`gqa`, the snapkv scorer): `repeat` (default: the reference without `gqa_support`
// repeats K/V to the query heads and allocates over the H query heads) or `reduce` (its
// `gqa_support` with `gqa_func` = head_reduce, allocating over the KV heads). `skip_layers`
// (the code's `skip`) keeps the first layers uniform; `normalize` (the code's option) weights each
// head's scores by the share of its mass in its own top-b; `pyramid` (+ `beta`) gives Ada-PyramidKV
// (the code's pyram_mode). layer_budget() reports the most one head can hold.
#include <algorithm>
#include <cmath>
#include <limits>

#include "policies/gqa_mode.hpp"
#include "policies/keep_scored.hpp"
#include "policies/pyramid_budgets.hpp"
#include "policies/registry.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies {
namespace {

class AdaKvPolicy : public Policy {
 public:
  explicit AdaKvPolicy(const nlohmann::json& p)
      : scorer_(make_scorer(p.at("scorer"), p)),
        alpha_(p.at("floor_alpha")),
        skip_layers_(p.at("skip_layers")),
        normalize_(p.at("normalize")),
        pyramid_(p.at("pyramid")),
        beta_(p.at("beta")),
        reference_rounding_(p.at("reference_rounding")) {}

  std::string name() const override { return "adakv"; }
  StatsRequest wants() const override { return scorer_->wants(); }
  bool slot_order_free() const override { return scorer_->slot_order_free(); }
  bool observes_only_to_compress() const override { return scorer_->observes_only_to_compress(); }
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    scorer_->begin(info);
    base_.assign(std::max<int64_t>(info.n_layers, 0), 0);
    if (info.unlimited()) return;
    const int64_t w = scorer_->recent(info.budget), b = info.budget - w;
    if (pyramid_ && info.n_layers > 0) base_ = pyramid_capacities(info.n_layers, b, w, beta_, info.prompt_len, reference_rounding_);
    else std::fill(base_.begin(), base_.end(), b);
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    scorer_->observe(layer, cache, stats, phase);
  }

  // The layer's per-head average budget: window + b (b from the pyramid when enabled).
  int64_t head_average(int64_t layer) const {
    if (info_.unlimited()) return info_.budget;
    return scorer_->recent(info_.budget) + base(layer);
  }
  // The most one head may hold: the window plus α·b + (1 − α)·H·b, rounded up.
  int64_t layer_budget(int64_t layer) const override {
    if (info_.unlimited()) return info_.budget;
    const double b = static_cast<double>(base(layer));
    const int64_t stored = scorer_->repeats_kv() ? std::max(info_.n_heads, info_.n_kv_heads) : info_.n_kv_heads;
    const double heads = static_cast<double>(std::max<int64_t>(stored, 1));
    return scorer_->recent(info_.budget) + static_cast<int64_t>(std::ceil(alpha_ * b + (1 - alpha_) * heads * b - 1e-9));
  }

  void compress(int64_t layer, LayerCache& cache, Phase) override {
    const int64_t w = std::min(scorer_->recent(info_.budget), std::max<int64_t>(info_.budget, 1));
    const int64_t b = base(layer);
    {
      torch::Tensor counts = valid_counts(cache);
      const int64_t heads = cache.kv_heads();
      if (counts.sum().item<int64_t>() <= heads * (w + b) && counts.max().item<int64_t>() <= layer_budget(layer)) return;
    }
    if (scorer_->repeats_kv()) repeat_to_query_heads(cache, info_);
    const int64_t H = cache.kv_heads(), n = cache.size();
    const torch::Tensor protected_slots = newest_valid(cache, w);
    torch::Tensor window = protected_slots.to(torch::kCPU);
    if (b <= 0) {  // the budget is all window
      keep_best(cache, torch::zeros({1, n}), std::max<int64_t>(w, 1), window);
      return;
    }
    torch::Tensor prefix = window.logical_not();
    if (!cache.all_valid()) prefix = prefix.logical_and(cache.valid().to(torch::kCPU));
    const float inf = std::numeric_limits<float>::infinity();
    torch::Tensor scores = scorer_->scores(layer, cache, protected_slots).to(torch::kCPU, torch::kFloat32).expand({H, n}).contiguous();
    const torch::Tensor available = prefix.sum(1);
    const torch::Tensor surplus = available - allocate(layer, scores, prefix, available, b);
    // Each head evicts its lowest-scored prefix tokens beyond its capacity (ties: the newest first,
    // so it keeps what its top-capacity in arrival order keeps); the window is never evicted.
    const int64_t most = surplus.max().item<int64_t>();
    if (most <= 0) return;
    torch::Tensor victims = lowest_scored_slots(scores.masked_fill(prefix.logical_not(), inf), cache.positions().to(torch::kCPU),
                                                most, /*lowest_first=*/true);
    cache.evict(victims, surplus);
  }

 private:
  int64_t base(int64_t layer) const {
    if (layer < 0 || layer >= static_cast<int64_t>(base_.size())) return std::max<int64_t>(info_.budget - scorer_->recent(info_.budget), 0);
    return base_[layer];
  }

  // Per-head capacities [H] int64 (outside the window) for this layer; `prefix` marks the tokens
  // outside the window, `available` counts them per head.
  torch::Tensor allocate(int64_t layer, torch::Tensor scores, const torch::Tensor& prefix, const torch::Tensor& available,
                         int64_t b) const {
    const int64_t H = scores.size(0), n = scores.size(1);
    std::vector<int64_t> capacity(H, b);
    if (layer >= skip_layers_) {
      if (normalize_) {
        // The code's `normalize`: scale each head by the share of its mass held by its own top-b.
        torch::Tensor finite = scores.masked_fill(prefix.logical_not(), 0).clamp_min(0);
        torch::Tensor top = std::get<0>(finite.topk(std::min<int64_t>(b, n), 1)).sum(1, true);
        scores = scores * (top / finite.sum(1, true).clamp_min(1e-30));
      }
      // Top H·b over all heads' scores; c_i = the number that fall in head i (ties go to the lower
      // head: a stable sort of the heads' rows one after another). Only the counts matter, so an
      // order statistic replaces the sort.
      const int64_t k = std::min<int64_t>(H * b, available.sum().item<int64_t>());
      scores = scores.masked_fill(prefix.logical_not(), -std::numeric_limits<float>::infinity());
      const torch::Tensor c = top_k_mask(scores.reshape({1, H * n}), k).reshape({H, n}).sum(1);
      const auto counts = c.accessor<int64_t, 1>();
      std::vector<double> ideal(H);
      for (int64_t h = 0; h < H; ++h) {
        const double ch = static_cast<double>(counts[h]);
        if (reference_rounding_)
          // In float32 as the reference (an int tensor times a Python float), rounded half to even.
          capacity[h] = static_cast<int64_t>(std::nearbyint(static_cast<float>(ch) * static_cast<float>(1 - alpha_) +
                                                            static_cast<float>(std::floor(static_cast<double>(b) * alpha_))));
        else
          ideal[h] = alpha_ * static_cast<double>(b) + (1 - alpha_) * ch;
      }
      if (!reference_rounding_) capacity = apportion(ideal, H * b);
    }
    return torch::tensor(capacity, torch::kInt64).clamp_min(0).minimum(available);
  }

  std::unique_ptr<SlotScorer> scorer_;
  double alpha_;
  int64_t skip_layers_;
  bool normalize_, pyramid_;
  int64_t beta_;
  bool reference_rounding_;
  std::vector<int64_t> base_;  // per layer: b, the per-head average outside the window
};

const PolicyRegistration registration({
    "adakv",
    "Head-adaptive budget allocation (top H·b over all heads + α safeguard) around a scorer",
    "Ada-KV (Feng et al. 2024, Alg. 1; FFY0/AdaKV AdaptiveSnapKVCluster, floor_alpha 0.2)",
    {params::Param::text("scorer", "snapkv", "the registered scorer whose scores are allocated (its parameters join these)"),
     params::Param::number("floor_alpha", 0.2, "safeguard: every head keeps at least α·b", 0, 1),
     params::Param::integer("skip_layers", 0, "the first layers keep uniform budgets (the code's skip)", 0),
     params::Param::flag("normalize", false, "weight each head's scores by its mass in its own top-b (the code's option)"),
     params::Param::flag("pyramid", false, "Ada-PyramidKV: per-layer budgets as PyramidKV (the code's pyram_mode)"),
     params::Param::integer("beta", 20, "pyramid: the ratio of the largest to the smallest layer budget", 1),
     params::Param::flag("reference_rounding", true, "round each head as the reference (total may differ from H·b)")},
    [](const nlohmann::json& p) { return std::make_unique<AdaKvPolicy>(p); },
    "its ragged eviction sizes the cache by the longest head (compresses once, after the prompt, under oneshot)",
    "",
    "scorer"});

}  // namespace
}  // namespace kvbench::policies
