// SnapKV (Li et al., "SnapKV: LLM Knows What You are Looking for Before Generation", 2024;
// reference code FasterDecoding/SnapKV snapkv/monkeypatch/snapkv_utils.py, SnapKVCluster): the
// attention of the last `window` = 32 queries (the observation window) is summed per head over
// those queries, max-pooled along the sequence (kernel 7, the repository's LongBench configs;
// `pooling: avg` selectable, as the reference's avgpool) over the tokens before the window, and
// each head keeps its top C − window tokens plus the window. GQA (`gqa`): `repeat` (default) as the
// reference, which repeats K/V to the query heads before compressing (mistral_hijack_4_37.py), so
// every query head keeps its own tokens and the layer stores n_heads heads; `reduce` reduces the
// query heads of a group to their KV head with `head_reduce` (KVCache-Factory's kv_head mode,
// kvpress). The window counts inside the budget; when B ≤ window the layer keeps its last B
// tokens. Under stream/decode the window rows are the queries of the current block/step (one row
// while decoding); the reference compresses the prompt once.
#include <map>

#include "policies/arrival_order.hpp"
#include "policies/gqa_mode.hpp"
#include "policies/head_reduce.hpp"
#include "policies/keep_scored.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies {
namespace {

// SnapKV (Li et al., 2024; FasterDecoding/SnapKV snapkv_utils.py): the attention of the last
// `window` queries, summed over those queries (the reference sums; Ada-KV's code averages, the
// same ranking), reduced from query heads to KV heads, then pooled along the sequence (max, kernel
// 7) over the slots outside the window only — the window slots are zeroed before pooling, which
// equals the reference's pooling of the prefix alone for both max (scores ≥ 0) and avg (zero pads).
// GQA (`gqa`): `repeat` (default, the official code) keeps the query heads' scores apart and the
// policy repeats the layer's K/V to the query heads before selecting; `reduce` reduces them to
// their KV head with `head_reduce` (policies/gqa_mode.hpp).
class WindowAttentionScorer : public SlotScorer {
 public:
  explicit WindowAttentionScorer(const nlohmann::json& p)
      : window_(p.at("window")),
        kernel_(p.at("kernel")),
        pooling_(p.at("pooling")),
        reduce_(parse_head_reduce(p.at("head_reduce"))),
        gqa_(parse_gqa_mode(p.at("gqa"))) {
    if (kernel_ % 2 == 0) throw std::invalid_argument("snapkv: kernel must be odd and positive");
  }
  std::string name() const override { return "snapkv"; }
  // Pooling reads neighbouring tokens, which scores() finds by arrival order, not by slot.
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.window = window_;
    return r;
  }
  bool observes_only_to_compress() const override { return true; }  // summed_: replaced each forward
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override {
    if (!stats.window_rows.defined()) return;
    torch::Tensor summed = stats.window_rows.sum(1);  // [heads, n], kept on the device
    summed_[layer] = (gqa_ == GqaMode::kRepeat ? summed : reduce_to_kv_heads(summed, cache.kv_heads(), reduce_)).to(torch::kFloat32);
  }
  int64_t recent(int64_t budget) const override { return std::min(window_, budget); }
  bool repeats_kv() const override { return gqa_ == GqaMode::kRepeat; }
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor& protected_slots) override {
    const torch::Tensor& s = observed_row(summed_, layer, cache);
    if (s.size(0) != cache.kv_heads())
      throw std::logic_error("snapkv scorer: " + std::to_string(s.size(0)) + " score rows for " +
                             std::to_string(cache.kv_heads()) + " stored heads (gqa repeat: repeat the cache first)");
    torch::Tensor outside = protected_slots.logical_not();
    if (!cache.all_valid()) outside = outside.logical_and(cache.valid());
    torch::Tensor masked = s * outside.to(torch::kFloat32);
    // Pooled over each head's valid tokens in arrival order, as the reference's packed per-head
    // cache holds them, and put back in slot order.
    const ArrivalOrder order(cache);
    return order.scatter(pool_scores(order.gather(masked), pooling_, kernel_));
  }

 private:
  int64_t window_, kernel_;
  std::string pooling_;
  HeadReduce reduce_;
  GqaMode gqa_;
  std::map<int64_t, torch::Tensor> summed_;  // per layer: [stored heads, n] window-summed attention
};

const ScorerRegistration scorer(
    {"snapkv",
     {params::Param::integer("window", 32, "observation window: the last w queries, kept inside the budget", 1),
      params::Param::integer("kernel", 7, "pooling kernel (odd)", 1),
      params::Param::choice("pooling", "max", {"max", "avg", "none"}, "pooling along the sequence (the reference's maxpool)"),
      head_reduce_param(), gqa_param()},
     [](const nlohmann::json& p) { return std::make_unique<WindowAttentionScorer>(p); }});


const PolicyRegistration registration({
    "snapkv",
    "Observation-window attention, pooled, per-head top-(C − w) + the window",
    "SnapKV (Li et al. 2024; FasterDecoding/SnapKV SnapKVCluster: window 32, kernel 7, maxpool)",
    {},
    [](const nlohmann::json& p) { return std::make_unique<ScoredPolicy>("snapkv", make_scorer("snapkv", p)); },
    "",
    "snapkv"});

}  // namespace
}  // namespace kvbench::policies
