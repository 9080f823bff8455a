#include "policies/attention_scorers.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "policies/gqa_mode.hpp"
#include "policies/keep_scored.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies {
namespace {

// H2O (Zhang et al., NeurIPS 2023; FMInference/H2O h2o_hf/utils_real_drop/modify_llama.py,
// H2OKVCache_LayerWise): a slot's score is the attention it received, summed over every query
// since it entered the cache (prefill rows, stream blocks, decode steps); evicted slots take their
// score with them (per-slot state "h2o_acc", gathered by keep()).
class AccumulatedAttentionScorer : public SlotScorer {
 public:
  explicit AccumulatedAttentionScorer(const nlohmann::json& p)
      : recent_ratio_(p.value("recent_ratio", 0.5)), reduce_(parse_head_reduce(p.value("head_reduce", "mean"))) {
    if (!(recent_ratio_ >= 0 && recent_ratio_ <= 1)) throw std::invalid_argument("h2o: recent_ratio must be in [0, 1]");
  }
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
  torch::Tensor scores(int64_t, const LayerCache& cache, const torch::Tensor&) override {
    return const_cast<LayerCache&>(cache).state("h2o_acc");  // stays on the cache's device
  }

 private:
  double recent_ratio_;
  HeadReduce reduce_;
};

// TOVA (Oren et al., 2024; schwartz-lab-NLP/TOVA): the attention row of the forward's last query,
// per KV head (the TOVA policy then averages over heads).
class LastQueryScorer : public SlotScorer {
 public:
  explicit LastQueryScorer(const nlohmann::json& p) : reduce_(parse_head_reduce(p.value("head_reduce", "mean"))) {}
  std::string name() const override { return "tova"; }
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.last_row = true;
    return r;
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override {
    if (stats.last_row.defined())  // kept on the device: keep_best selects there
      last_[layer] = reduce_to_kv_heads(stats.last_row, cache.kv_heads(), reduce_).to(torch::kFloat32);
  }
  int64_t recent(int64_t) const override { return 0; }
  torch::Tensor scores(int64_t layer, const LayerCache& cache, const torch::Tensor&) override {
    return row_or_zeros(last_, layer, cache);
  }
  static torch::Tensor row_or_zeros(const std::map<int64_t, torch::Tensor>& rows, int64_t layer, const LayerCache& cache) {
    auto it = rows.find(layer);
    if (it == rows.end() || it->second.size(-1) != cache.size())
      throw std::logic_error("scorer: compress() without observe() of the same forward on layer " + std::to_string(layer));
    return it->second;
  }

 private:
  HeadReduce reduce_;
  std::map<int64_t, torch::Tensor> last_;
};

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
      : window_(p.value("window", 32)),
        kernel_(p.value("kernel", 7)),
        pooling_(p.value("pooling", "max")),
        reduce_(parse_head_reduce(p.value("head_reduce", "mean"))),
        gqa_(parse_gqa_mode(p.value("gqa", "repeat"))) {
    if (window_ < 1) throw std::invalid_argument("snapkv: window must be at least 1");
    if (kernel_ < 1 || kernel_ % 2 == 0) throw std::invalid_argument("snapkv: kernel must be odd and positive");
    if (pooling_ != "max" && pooling_ != "avg" && pooling_ != "none")
      throw std::invalid_argument("snapkv: pooling must be max, avg or none");
  }
  std::string name() const override { return "snapkv"; }
  // Pooling reads neighbouring tokens, which scores() finds by arrival order, not by slot.
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.window = window_;
    return r;
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override {
    if (!stats.window_rows.defined()) return;
    torch::Tensor summed = stats.window_rows.sum(1);  // [heads, n], kept on the device
    summed_[layer] = (gqa_ == GqaMode::kRepeat ? summed : reduce_to_kv_heads(summed, cache.kv_heads(), reduce_)).to(torch::kFloat32);
  }
  int64_t recent(int64_t budget) const override { return std::min(window_, budget); }
  bool repeats_kv() const override { return gqa_ == GqaMode::kRepeat; }
  torch::Tensor scores(int64_t layer, const LayerCache& cache, const torch::Tensor& protected_slots) override {
    torch::Tensor s = LastQueryScorer::row_or_zeros(summed_, layer, cache);
    if (s.size(0) != cache.kv_heads())
      throw std::logic_error("snapkv scorer: " + std::to_string(s.size(0)) + " score rows for " +
                             std::to_string(cache.kv_heads()) + " stored heads (gqa repeat: repeat the cache first)");
    torch::Tensor outside = protected_slots.logical_not();
    if (!cache.all_valid()) outside = outside.logical_and(cache.valid());
    torch::Tensor masked = s * outside.to(torch::kFloat32);
    if (cache.in_arrival_order() && cache.all_valid()) return pool_scores(masked, pooling_, kernel_);
    // Slots have moved (SlotOrder::kAny), or a ragged head has holes (Ada-KV): pool over each
    // head's valid tokens in arrival order, as the reference's packed per-head cache holds them,
    // and put the scores back.
    torch::Tensor perm = cache.arrival_order().expand(masked.sizes());
    if (!cache.all_valid()) perm = valid_first(perm, cache.valid());
    torch::Tensor pooled = pool_scores(masked.gather(1, perm), pooling_, kernel_);
    return torch::empty_like(pooled).scatter_(1, perm, pooled);
  }

 private:
  int64_t window_, kernel_;
  std::string pooling_;
  HeadReduce reduce_;
  GqaMode gqa_;
  std::map<int64_t, torch::Tensor> summed_;  // per layer: [stored heads, n] window-summed attention
};

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
      : history_(p.value("history_window", 400)),
        recent_(p.value("recent", 10)),
        reduce_(parse_head_reduce(p.value("head_reduce", "mean"))) {
    if (history_ < 1 || history_ > 100000) throw std::invalid_argument("scissorhands: history_window must be in [1, 100000]");
    if (recent_ < 0) throw std::invalid_argument("scissorhands: recent must be >= 0");
  }
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
  torch::Tensor scores(int64_t, const LayerCache& cache, const torch::Tensor&) override {
    auto& state = const_cast<LayerCache&>(cache);
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

}  // namespace

std::unique_ptr<SlotScorer> make_scorer(const std::string& name, const nlohmann::json& params) {
  if (name == "h2o") return std::make_unique<AccumulatedAttentionScorer>(params);
  if (name == "tova") return std::make_unique<LastQueryScorer>(params);
  if (name == "snapkv") return std::make_unique<WindowAttentionScorer>(params);
  if (name == "scissorhands") return std::make_unique<AboveAverageCountScorer>(params);
  throw std::invalid_argument("scorer must be snapkv, h2o, tova or scissorhands, got '" + name + "'");
}

nlohmann::json scorer_defaults(const std::string& name) {
  if (name == "h2o") return {{"recent_ratio", 0.5}, {"head_reduce", "mean"}};
  if (name == "tova") return {{"head_reduce", "mean"}};
  if (name == "snapkv")
    return {{"window", 32}, {"kernel", 7}, {"pooling", "max"}, {"head_reduce", "mean"}, {"gqa", "repeat"}};
  if (name == "scissorhands") return {{"history_window", 400}, {"recent", 10}, {"head_reduce", "mean"}};
  throw std::invalid_argument("scorer must be snapkv, h2o, tova or scissorhands, got '" + name + "'");
}

}  // namespace kvbench::policies
