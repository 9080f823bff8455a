// ObservedAttentionPress (kvpress/presses/observed_attention_press.py; H2O's accumulated
// attention, Zhang et al. 2023): a token's score is the attention it received, summed over the
// forward's queries and divided by how many of them could see it (kvpress's n − j at the
// prefill), averaged over each KV head's group of query heads. kvbench's `h2o` follows
// FMInference/H2O instead (sums, a recent window, re-scored at every step).
#include <map>

#include "policies/kvpress/press.hpp"

namespace kvbench::policies::kvpress {
namespace {

class ObservedAttentionPress : public Press {
 public:
  std::string name() const override { return "kvpress:observed_attention"; }
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.column_sums = true;
    return r;
  }
  bool observes_only_to_compress() const override { return true; }  // mean_: replaced each forward
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override {
    if (!stats.column_sums.defined()) return;
    torch::Tensor seen_by = stats.column_counts.to(stats.column_sums.device(), torch::kFloat32).clamp_min(1);
    mean_[layer] = mean_over_groups(stats.column_sums / seen_by, cache.kv_heads());
  }
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor&) override {
    return observed_row(mean_, layer, cache);
  }

 private:
  std::map<int64_t, torch::Tensor> mean_;  // per layer: [kv_heads, n]
};

const PressRegistration observed_attention_registration(
    {"observed_attention", "Mean attention each token received from the queries that saw it, group-averaged",
     "kvpress observed_attention_press.py (H2O's accumulated attention, Zhang et al. 2023)",
     {},
     [](const nlohmann::json&) { return std::make_unique<ObservedAttentionPress>(); },
     /*bare_name=*/true});

}  // namespace
}  // namespace kvbench::policies::kvpress
