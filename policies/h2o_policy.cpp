// H2O: Heavy-Hitter Oracle (Zhang et al., NeurIPS 2023, Alg. 1; reference code FMInference/H2O,
// h2o_hf/utils_real_drop/modify_llama.py, H2OKVCache_LayerWise). Every slot accumulates the
// attention it receives (column sums over each forward's queries, reduced from query heads to
// KV heads with `head_reduce`, mean by default: the same ranking as the GQA port's group sum);
// a layer over budget keeps its most recent tokens plus the heavy hitters — the highest
// accumulated scores among the older tokens — per KV head. Budget split: H2O's default half/half
// (recent = ⌊recent_ratio·B⌋, heavy hitters = the rest).
// `variant`:
//  - "real_drop" (default): the reference's real-drop cache: scores accumulate over every forward
//    and eviction runs whenever the protocol compresses: with --protocol stream/decode every step
//    evicts using the accumulated scores (Alg. 1's greedy eviction); with oneshot it is H2O applied
//    once to the prompt.
//  - "oneshot": H2O as the one-shot prompt compressor of KVCache-Factory (H2OKVCluster, the H2O
//    baseline of SnapKV/PyramidKV/Ada-KV tables): column sums of the prompt's queries, a fixed
//    recent window of `window` tokens (8, as KVCache-Factory's LongBench runner sets for H2O) and
//    B − window heavy hitters, compressing the prompt
//    once; it refuses to evict during streaming or decoding (use real_drop for that).
#include <algorithm>
#include <cmath>

#include "policies/head_reduce.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"

namespace kvbench::policies {
namespace {

// H2O (Zhang et al., NeurIPS 2023; FMInference/H2O h2o_hf/utils_real_drop/modify_llama.py,
// H2OKVCache_LayerWise): a slot's score is the attention it received, summed over every query
// since it entered the cache (prefill rows, stream blocks, decode steps); evicted slots take their
// score with them (per-slot state "h2o_acc", gathered by keep()).
class AccumulatedAttentionScorer : public SlotScorer {
 public:
  explicit AccumulatedAttentionScorer(const nlohmann::json& p)
      : recent_ratio_(p.at("recent_ratio")), reduce_(parse_head_reduce(p.at("head_reduce"))) {}
  std::string name() const override { return "h2o"; }
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.column_sums = true;
    return r;
  }
  void observe(int64_t, LayerCache& cache, const AttentionStats& stats, Phase) override {
    if (!stats.column_sums.defined()) return;
    torch::Tensor acc = cache.state("h2o_acc");
    acc += reduce_to_kv_heads(stats.column_sums, cache.kv_heads(), reduce_).to(acc.device(), torch::kFloat32);
  }
  int64_t recent(int64_t budget) const override {
    return std::min<int64_t>(budget, static_cast<int64_t>(std::floor(recent_ratio_ * static_cast<double>(budget))));
  }
  torch::Tensor scores(int64_t, LayerCache& cache, const torch::Tensor&) override {
    return cache.state("h2o_acc");  // stays on the cache's device
  }

 private:
  double recent_ratio_;
  HeadReduce reduce_;
};

const ScorerRegistration scorer({"h2o",
                                 {params::Param::number("recent_ratio", 0.5, "share of B kept as the recent window", 0, 1),
                                  head_reduce_param()},
                                 [](const nlohmann::json& p) { return std::make_unique<AccumulatedAttentionScorer>(p); }});


class H2OPolicy : public ScoredPolicy {
 public:
  explicit H2OPolicy(const nlohmann::json& p)
      : ScoredPolicy("h2o", make_scorer("h2o", p)), oneshot_(p.at("variant") == "oneshot"), window_(p.at("window")) {}
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (oneshot_ && phase != Phase::kPrefill) {
      if (fits_budget(cache, std::max<int64_t>(1, info_.budget))) return;
      throw std::invalid_argument(std::string("h2o: variant 'oneshot' compresses the prompt once; it cannot evict in phase ") +
                                  to_string(phase) + " (use --protocol oneshot, or variant real_drop)");
    }
    ScoredPolicy::compress(layer, cache, phase);
  }

 protected:
  int64_t recent_slots(int64_t budget) const override {
    return oneshot_ ? std::min(window_, budget) : ScoredPolicy::recent_slots(budget);
  }

 private:
  bool oneshot_;
  int64_t window_;
};

const PolicyRegistration registration({
    "h2o",
    "Heavy hitters (accumulated attention) + recent window, per KV head",
    "H2O (Zhang et al., NeurIPS 2023, Alg. 1; FMInference/H2O utils_real_drop; oneshot: KVCache-Factory H2OKVCluster)",
    {params::Param::choice("variant", "real_drop", {"real_drop", "oneshot"},
                           "real_drop: the reference's cache, evicting whenever the protocol compresses; oneshot: "
                           "KVCache-Factory's one-shot prompt compressor"),
     params::Param::integer("window", 8, "oneshot: the fixed recent window (KVCache-Factory's LongBench runner)", 0)},
    [](const nlohmann::json& p) { return std::make_unique<H2OPolicy>(p); },
    "",
    "h2o"});

}  // namespace
}  // namespace kvbench::policies
