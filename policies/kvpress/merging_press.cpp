// MergingPress (kvpress/presses/merging_press.py, after Token Merging and D2O): the press's top
// n_kept per KV head stay, as ScorerPress, but each evicted token's value is first folded into the
// kept token whose key is most cosine-similar (keys untouched, so RoPE stays valid):
//   w_e = max(sim, 0) · ‖v_e‖ / (‖v_e‖ + ‖v_t‖ + 1e-6),  v_t ← (v_t + Σ w_e v_e) / (1 + Σ w_e),
// for the evicted tokens with sim ≥ similarity_threshold (and, with merge_fraction < 1, among the
// head's most similar merge_fraction of them). Float32 throughout, written back in the cache dtype.
#include <cmath>
#include <tuple>
#include <vector>

#include "policies/gqa_mode.hpp"
#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

constexpr double kMergeEps = 1e-6;  // kvpress _EPS: norms' floor and the weights' denominator

class MergingPress : public WrapperPolicy {
 public:
  MergingPress(std::string name, std::unique_ptr<SlotScorer> wrapped, const nlohmann::json& p)
      : WrapperPolicy(std::move(name), std::move(wrapped)),
        threshold_(p.at("similarity_threshold")), fraction_(p.at("merge_fraction")) {
    if (fraction_ <= 0) throw std::invalid_argument(this->name() + ": merge_fraction must be in (0, 1] (kvpress asserts it)");
  }

  void compress(int64_t layer, LayerCache& cache, Phase) override {
    const int64_t budget = std::max<int64_t>(1, info_.budget);
    if (fits_budget(cache, budget)) return;
    if (press().repeats_kv()) repeat_to_query_heads(cache, info_);
    const auto device = cache.keys().device();
    const torch::Tensor window = newest_valid(cache, std::min(budget, press().recent(budget)));
    const torch::Tensor valid = cache.all_valid() ? torch::ones({cache.kv_heads(), cache.size()}, torch::dtype(torch::kBool).device(device))
                                                  : cache.valid();
    torch::Tensor scores = press().scores(layer, cache, window).to(device, torch::kFloat32).expand({cache.kv_heads(), cache.size()});
    scores = scores.masked_fill(window.to(device), INFINITY).masked_fill(valid.logical_not(), -INFINITY);
    // keep_best's choice (protected first, then the best scores, ties to the older slot), as a mask.
    const torch::Tensor kept = (device.is_cpu() ? top_k_mask(scores, budget) : top_k_mask_by_ops(scores, budget)).logical_and(valid);
    for (int64_t h = 0; h < cache.kv_heads(); ++h) merge_head(cache, h, kept[h], valid[h].logical_and(kept[h].logical_not()));
    keep_best(cache, kept.to(torch::kFloat32), budget);
  }

 private:
  // Folds head h's evicted values into its kept ones, in the cache.
  void merge_head(LayerCache& cache, int64_t h, const torch::Tensor& kept, const torch::Tensor& evicted) const {
    const torch::Tensor kept_slots = kept.nonzero().squeeze(1), evicted_slots = evicted.nonzero().squeeze(1);
    if (kept_slots.numel() == 0 || evicted_slots.numel() == 0) return;
    const torch::Tensor keys = cache.keys()[h].to(torch::kFloat32), values = cache.values()[h];
    auto unit = [](const torch::Tensor& x) { return x / x.norm(2, -1, true).clamp_min(kMergeEps); };
    const torch::Tensor kept_keys = unit(keys.index_select(0, kept_slots));
    const torch::Tensor evicted_keys = unit(keys.index_select(0, evicted_slots));
    // The most similar kept token of each evicted one, in chunks of ~2^24 similarities.
    const int64_t e = evicted_slots.size(0), chunk = std::max<int64_t>(1, (int64_t{1} << 24) / kept_slots.size(0));
    std::vector<torch::Tensor> sims, targets;
    for (int64_t start = 0; start < e; start += chunk) {
      auto [sim, target] = evicted_keys.narrow(0, start, std::min(chunk, e - start)).matmul(kept_keys.t()).max(1);
      sims.push_back(sim);
      targets.push_back(target);
    }
    const torch::Tensor sim = torch::cat(sims), target = torch::cat(targets);
    torch::Tensor merge = sim >= threshold_;
    if (fraction_ < 1.0 && merge.any().item<bool>())
      merge = merge.logical_and(sim >= sim.masked_fill(merge.logical_not(), -INFINITY).quantile(1.0 - fraction_));
    const torch::Tensor kept_values = values.index_select(0, kept_slots).to(torch::kFloat32);
    const torch::Tensor evicted_values = values.index_select(0, evicted_slots).to(torch::kFloat32);
    const torch::Tensor evicted_norm = evicted_values.norm(2, -1);
    const torch::Tensor target_norm = kept_values.norm(2, -1).index_select(0, target);
    const torch::Tensor weight =
        sim.clamp_min(0) * merge.to(torch::kFloat32) * evicted_norm / (evicted_norm + target_norm + kMergeEps);
    const torch::Tensor added = torch::zeros_like(kept_values).index_add_(0, target, weight.unsqueeze(1) * evicted_values);
    const torch::Tensor total = torch::zeros({kept_slots.size(0)}, weight.options()).index_add_(0, target, weight);
    const torch::Tensor merged =
        torch::where((total > 0).unsqueeze(1), (kept_values + added) / (1 + total).unsqueeze(1), kept_values);
    values.index_copy_(0, kept_slots, merged.to(values.scalar_type()));
  }

  double threshold_, fraction_;
};

params::Params merging_params() {
  return {params::Param::number("similarity_threshold", 0.0, "least cosine similarity of the keys for an evicted value to merge", 0, 1),
          params::Param::number("merge_fraction", 1.0, "share of the evicted tokens (the most similar) that merge", 0, 1)};
}

const bool merging_registered = [] {
  for (const auto& [name, press, defaults] : std::vector<std::tuple<std::string, std::string, nlohmann::json>>{
           {"kvpress:merging", "", nlohmann::json::object()},
           {"kvpress:merging_knorm", "kvpress:knorm", nlohmann::json::object()},
           {"kvpress:merging_snapkv", "kvpress:snapkv", nlohmann::json::object()},
           {"kvpress:merging_expected_attention", "expected_attention", {{"epsilon", 1e-2}}},
           {"kvpress:merging_kvzap_mlp", "kvpress:kvzap", nlohmann::json::object()}})
    register_wrapper({name, "MergingPress", "the press's top n_kept, evicted values folded into their most similar survivor",
                      "kvpress merging_press.py (after Bolya et al. 2023, arXiv 2210.09461; Wan et al. 2024, arXiv 2406.13035)",
                      merging_params(), press, "kvpress:knorm", defaults,
                      "its merge lists each head's kept and evicted slots on the host (nonzero)",
                      [](const std::string& n, std::unique_ptr<SlotScorer> s, const nlohmann::json& p) {
                        return std::make_unique<MergingPress>(n, std::move(s), p);
                      }});
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
