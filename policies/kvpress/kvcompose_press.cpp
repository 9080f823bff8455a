// KVComposePress (kvpress/presses/kvcompose_press.py, after Akulov et al., "KVCompose", arXiv
// 2509.05165): the prompt is prefilled, then forwarded a second time after itself; each token's
// score on a query head is its largest attention from that second pass (agg_task "max"; "mean":
// the mean), aggregated over the head's group (agg_group), plus the mean over the layer's KV heads
// (add_mean_across_heads). Each head's scores sorted descending are its rank curve; the budget is
// global: of the curves' L·n (structured: per layer the agg_head of its heads' curves, layer 0 raised
// to the largest of every layer's) or L·Hkv·n (unstructured: per head) points, the best
// int(points · (1 − r)) decide how many tokens each layer (each head) keeps; every head then keeps
// its own best that many. The session runs the second forward (policies/context_rescoring.hpp)
// and rolls it back, so the cache holds the prompt alone, as structured kvpress cuts it.
#include <algorithm>
#include <map>
#include <vector>

#include "policies/kvpress/rescoring_press.hpp"
#include "policies/registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

constexpr double kLowerBoundBonus = 1e9;  // kvpress adds it to the first keep_token_lower_bound points

// kvpress's Aggregator over rows fed one at a time: "max" (from −∞) or "mean" (running sum / count).
torch::Tensor aggregate_rows(const std::string& how, const std::vector<torch::Tensor>& rows) {
  torch::Tensor acc = how == "max" ? torch::full_like(rows[0], -INFINITY) : torch::zeros_like(rows[0]);
  for (const torch::Tensor& row : rows) acc = how == "max" ? torch::maximum(acc, row) : acc + row;
  return how == "max" ? acc : acc / static_cast<double>(rows.size());
}

// The `total` largest of `points` [rows, n], ties to the lower index: how many fall in each row.
std::vector<int64_t> best_per_row(const torch::Tensor& points, int64_t total) {
  const torch::Tensor counts = top_k_mask(points.reshape({1, -1}), total).view(points.sizes()).sum(1).contiguous();
  return {counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + counts.numel()};
}

class KvComposePress : public RescoringPress {
 public:
  KvComposePress(std::string name, const nlohmann::json& p)
      : RescoringPress(std::move(name), "by a second forward after it (kvpress: the prefill only)"), structured_(p.at("structured")),
        agg_task_(p.at("agg_task")), agg_group_(p.at("agg_group")), agg_head_(p.at("agg_head")), add_v_norm_(p.at("add_v_norm")),
        add_head_mean_(p.at("add_mean_across_heads")), lower_bound_(p.at("keep_token_lower_bound")) {}
  std::vector<std::vector<int64_t>> scoring_inputs(const std::vector<int64_t>& prompt, const PromptText*) override { return {prompt}; }

  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override {
    if (!in_scoring() || info_.unlimited()) return;
    const int64_t n = info_.prompt_len;
    // The pass's attention to the prompt's tokens, per query head [H, n] (as kvpress's
    // MaxAggregator/MeanAggregator over every query of every scoring input).
    const torch::Tensor a = (agg_task_ == "max" ? stats.column_max : stats.column_sums).narrow(1, 0, n).to(torch::kCPU, torch::kFloat32);
    auto [it, first] = task_.try_emplace(layer, a);
    if (!first) it->second = agg_task_ == "max" ? torch::maximum(it->second, a) : it->second + a;
    queries_[layer] += stats.n_queries;
    if (add_v_norm_) value_norms_[layer] = cache.values().narrow(1, 0, n).to(torch::kCPU, torch::kFloat32).norm(2, -1);
  }

 protected:
  StatsRequest scoring_wants() const override {
    StatsRequest r;
    (agg_task_ == "max" ? r.column_max : r.column_sums) = true;
    return r;
  }
  void forget() override {
    task_.clear();
    queries_.clear();
    value_norms_.clear();
  }
  bool scored() const override { return static_cast<int64_t>(task_.size()) == info_.n_layers; }
  // Every head's own best `count` (kvpress's argsort descending; ties to the older token).
  torch::Tensor kept_positions(int64_t layer, int64_t head, int64_t count) override {
    return top_k_slots(scores_[layer][head].unsqueeze(0), count)[0];
  }

 private:
  // Every head's scores and how many tokens each keeps, from every layer's second-pass attention.
  std::vector<std::vector<int64_t>> plan() override {
    const int64_t L = info_.n_layers, kv = info_.n_kv_heads, g = info_.n_heads / kv, n = info_.prompt_len;
    scores_.assign(L, {});
    std::vector<torch::Tensor> head_curves, layer_curves;
    for (int64_t l = 0; l < L; ++l) {
      const torch::Tensor task = agg_task_ == "max" ? task_[l] : task_[l] / static_cast<double>(queries_[l]);
      std::vector<torch::Tensor> s;
      for (int64_t h = 0; h < kv; ++h) {
        std::vector<torch::Tensor> group;
        for (int64_t j = 0; j < g; ++j) group.push_back(task[h * g + j]);
        s.push_back(aggregate_rows(agg_group_, group));
        if (add_v_norm_) s.back() = s.back() * value_norms_[l][h];
      }
      torch::Tensor layer_scores = torch::stack(s);
      if (add_head_mean_) layer_scores = layer_scores + layer_scores.mean(0, true);
      const torch::Tensor curves = std::get<0>(layer_scores.sort(-1, /*descending=*/true));
      for (int64_t h = 0; h < kv; ++h) {
        scores_[l].push_back(layer_scores[h]);
        head_curves.push_back(curves[h]);
      }
      layer_curves.push_back(aggregate_rows(agg_head_, std::vector<torch::Tensor>(head_curves.end() - kv, head_curves.end())));
    }
    const int64_t bound = std::min(lower_bound_, n);
    torch::Tensor per_head = torch::stack(head_curves), per_layer = torch::stack(layer_curves);
    per_head.narrow(1, 0, bound).add_(kLowerBoundBonus);
    per_layer.narrow(1, 0, bound).add_(kLowerBoundBonus);
    per_layer[0].copy_(std::get<0>(per_layer.max(0)));  // kvpress: "ensures first layer is the largest"
    const torch::Tensor& points = structured_ ? per_layer : per_head;
    // kvpress's global budget int(points · (1 − r)); a token budget B is B of every row's n.
    const int64_t total = info_.compression_ratio ? static_cast<int64_t>(static_cast<double>(points.numel()) * (1.0 - *info_.compression_ratio))
                                                  : points.size(0) * std::min(info_.budget, n);
    const std::vector<int64_t> counts = best_per_row(points, total);
    std::vector<std::vector<int64_t>> kept(L, std::vector<int64_t>(kv));
    for (int64_t l = 0; l < L; ++l)
      for (int64_t h = 0; h < kv; ++h) kept[l][h] = structured_ ? counts[l] : counts[l * kv + h];
    return kept;
  }

  bool structured_;
  std::string agg_task_, agg_group_, agg_head_;
  bool add_v_norm_, add_head_mean_;
  int64_t lower_bound_;
  std::map<int64_t, torch::Tensor> task_;        // per layer: [H, n], max (or sum) over the scoring queries
  std::map<int64_t, int64_t> queries_;           // per layer: scoring queries seen
  std::map<int64_t, torch::Tensor> value_norms_;  // per layer: [Hkv, n] ‖v‖ of the prompt's tokens
  std::vector<std::vector<torch::Tensor>> scores_;  // per layer, per KV head: [n]
};

params::Params kvcompose_params(bool structured) {
  const std::vector<std::string> aggregations = {"max", "mean"};
  return {params::Param::flag("structured", structured, "one count for every head of a layer (the cache stays rectangular); false: per head"),
          params::Param::choice("agg_task", "max", aggregations, "a token's score on a query head over the second pass's queries"),
          params::Param::choice("agg_group", "mean", aggregations, "over the query heads of a KV head"),
          params::Param::choice("agg_head", "mean", aggregations, "over a layer's KV heads' rank curves (structured)"),
          params::Param::flag("add_v_norm", false, "multiply a token's score by its value's norm (kvpress raises here: see docs)"),
          params::Param::flag("add_mean_across_heads", true, "add the layer's mean over KV heads to every head's scores"),
          params::Param::integer("keep_token_lower_bound", 0, "rank-curve points every layer (head) keeps first", 0)};
}

const bool kvcompose_registered = [] {
  for (const bool structured : {true, false}) {
    const std::string name = structured ? "kvpress:kvcompose" : "kvpress:kvcompose_unstructured";
    PolicyRegistration({name,
                        std::string("KVCompose: the prompt forwarded again after itself, its attention ranks tokens; a global budget ") +
                            (structured ? "split over layers" : "split over (layer, head)"),
                        "Akulov et al. 2025 (arXiv 2509.05165); kvpress kvcompose_press.py", kvcompose_params(structured),
                        [name](const nlohmann::json& p) { return std::make_unique<KvComposePress>(name, p); },
                        "its plan sorts every layer's scores on the host, once per prompt"});
  }
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
