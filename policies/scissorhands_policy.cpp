// ScissorHands (Liu et al., "Scissorhands: Exploiting the Persistence of Importance Hypothesis
// for LLM KV Cache Compression at Test Time", NeurIPS 2023, Alg. 1–2). No reference code is
// public. Importance of a token = how many of the last `history_window` queries gave it more
// than the average attention 1/t (t = tokens that query attended) — RoCo's "accumulative quantized
// attention score"; the `recent` newest tokens are never evicted; the lowest counts are evicted
// per KV head (AboveAverageCountScorer below).
// The paper compresses when the cache reaches B and drops m tokens at once; `drop_ratio` = m/B
// (default 0: evict only what exceeds B, one token per decode step, as RoCo's re-implementation
// does, so budgets compare one-to-one with the other policies). The defaults history_window = 400
// and recent = 10 are our reading of the paper's settings (the paper text is not in
// shared/papers; check them before quoting numbers against the paper's tables).
#include <cmath>

#include <algorithm>
#include <map>

#include "policies/head_reduce.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"

namespace kvbench::policies {
namespace {

// ScissorHands (Liu et al., NeurIPS 2023, Alg. 2; no public reference code): a slot's importance
// is the number of queries among the last `history` (the history window) that gave it more than
// the average attention 1/t, t = the number of tokens that query attended. The per-query
// indicators live in a ring of `history` columns per slot (state "sh_ring", uint8 holding how many
// query heads of the KV head's group were above average), so counts cover exactly the last
// `history` queries and travel with their slot through keep(); the ring's per-slot sum and
// count of non-zero columns ("sh_sum", "sh_nonzero") are updated as columns are overwritten, so a
// decode step costs O(size), not O(size · history). GQA: head_reduce mean = count/g,
// sum = count, max = whether any query head of the group was above average.
class AboveAverageCountScorer : public SlotScorer {
 public:
  explicit AboveAverageCountScorer(const nlohmann::json& p)
      : history_(p.at("history_window")), recent_(p.at("recent")), reduce_(parse_head_reduce(p.at("head_reduce"))) {}
  std::string name() const override { return "scissorhands"; }
  // The ring travels with its slot; the window queries are the forward's new (last) slots.
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.window = history_;
    return r;
  }
  void begin(const SequenceInfo& info) override {
    steps_.clear();
    group_ = info.n_kv_heads > 0 ? std::max<int64_t>(1, info.n_heads / info.n_kv_heads) : 1;
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override {
    if (!stats.window_rows.defined()) return;
    const int64_t kvh = cache.kv_heads(), n = cache.size();
    // Everything on the cache's device: the host never reads it.
    torch::Tensor rows = stats.window_rows.to(torch::kFloat32);  // [H, w, n], the forward's last w queries
    const int64_t T = std::max(stats.n_queries, rows.size(1)), H = rows.size(0);
    if (rows.size(1) > history_) rows = rows.narrow(1, rows.size(1) - history_, history_);
    const int64_t w = rows.size(1);
    group_ = H / kvh;
    const auto longs = torch::TensorOptions().dtype(torch::kInt64).device(rows.device());
    // t = tokens attended by each window query: the valid slots up to its own.
    torch::Tensor last_slot = torch::arange(n - w, n, longs);  // [w]
    torch::Tensor attended;                                    // [kvh, w]
    if (cache.all_valid()) {
      attended = (last_slot + 1).to(torch::kFloat32).unsqueeze(0).expand({kvh, w});
    } else {
      torch::Tensor cum = cache.valid().to(torch::kInt64).cumsum(1);
      attended = cum.index_select(1, last_slot).to(torch::kFloat32);
    }
    // [H, w, 1]: query head h of KV head h / group_
    torch::Tensor threshold = attended.reciprocal().unsqueeze(1).expand({kvh, group_, w}).reshape({H, w, 1});
    torch::Tensor above = rows.gt(threshold).reshape({kvh, group_, w, n}).sum(1).to(torch::kUInt8);  // [kvh, w, n]
    torch::Tensor ring = cache.state("sh_ring", {history_}, torch::kUInt8);  // [kvh, n, history]
    int64_t& step = steps_[layer];
    torch::Tensor cols = torch::arange(step + T - w, step + T, longs) % history_;
    // The ring's totals are kept up to date column by column, so scoring never reads the ring.
    torch::Tensor fresh = above.permute({0, 2, 1});  // [kvh, n, w]
    torch::Tensor overwritten = ring.index_select(2, cols);
    cache.state("sh_sum", {}, torch::kInt32) +=
        fresh.sum(2, false, torch::kInt32) - overwritten.sum(2, false, torch::kInt32);
    cache.state("sh_nonzero", {}, torch::kInt32) +=
        fresh.gt(0).sum(2, false, torch::kInt32) - overwritten.gt(0).sum(2, false, torch::kInt32);
    ring.index_copy_(2, cols, fresh);
    step += T;
  }
  int64_t recent(int64_t budget) const override { return std::min(recent_, budget); }
  torch::Tensor scores(int64_t, LayerCache& state, const torch::Tensor&) override {
    switch (reduce_) {
      case HeadReduce::kMax: return state.state("sh_nonzero", {}, torch::kInt32).to(torch::kFloat32);
      case HeadReduce::kSum: return state.state("sh_sum", {}, torch::kInt32).to(torch::kFloat32);
      case HeadReduce::kMean: break;
    }
    return state.state("sh_sum", {}, torch::kInt32).to(torch::kFloat32) / static_cast<float>(group_);
  }

 private:
  int64_t history_, recent_;
  HeadReduce reduce_;
  int64_t group_ = 1;
  std::map<int64_t, int64_t> steps_;  // per layer: queries observed so far
};

const ScorerRegistration scorer({"scissorhands",
                                 {params::Param::integer("history_window", 400, "queries whose votes count", 1, 100000),
                                  params::Param::integer("recent", 10, "newest tokens never evicted (r)", 0),
                                  head_reduce_param()},
                                 [](const nlohmann::json& p) { return std::make_unique<AboveAverageCountScorer>(p); }});


class ScissorHandsPolicy : public ScoredPolicy {
 public:
  explicit ScissorHandsPolicy(const nlohmann::json& p)
      : ScoredPolicy("scissorhands", make_scorer("scissorhands", p)), drop_ratio_(p.at("drop_ratio")) {
    if (drop_ratio_ >= 1) throw std::invalid_argument("scissorhands: drop_ratio must be in [0, 1)");
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    const int64_t budget = std::max<int64_t>(1, info_.budget);
    if (fits_budget(cache, budget)) return;
    // Over budget: drop down to B − m (m = drop_ratio·B), at least down to B.
    target_ = std::max<int64_t>(1, budget - static_cast<int64_t>(std::floor(drop_ratio_ * budget)));
    ScoredPolicy::compress(layer, cache, phase);
    target_ = 0;
  }
  int64_t layer_budget(int64_t layer) const override { return target_ > 0 ? target_ : info_.budget; }

 private:
  double drop_ratio_;
  int64_t target_ = 0;
};

const PolicyRegistration registration({
    "scissorhands",
    "Counts of above-average attention within a history window; recent tokens protected",
    "ScissorHands (Liu et al., NeurIPS 2023, Alg. 2; no public code; RoCo's AQAS re-implementation)",
    {params::Param::number("drop_ratio", 0.0, "m/B: tokens dropped at once when over budget (0: only the excess)", 0)},
    [](const nlohmann::json& p) { return std::make_unique<ScissorHandsPolicy>(p); },
    "",
    "scissorhands"});

}  // namespace
}  // namespace kvbench::policies
