// TOVA: Token Omission Via Attention (Oren et al., "Transformers are Multi-State RNNs", 2024;
// reference code schwartz-lab-NLP/TOVA): when a layer exceeds its budget, drop the tokens with the
// lowest attention from the current (last) query, averaged over all heads — the same tokens are
// kept on every KV head. No recent window is protected (RoCo Table 1: eviction scope "-"). With
// GQA, query heads are reduced to their KV head (`head_reduce`, mean) and then averaged over KV
// heads, which for `mean` equals the average over all query heads. Under stream/decode one token
// leaves per step as in the paper; at one-shot prefill the prompt is cut to B at once by the last
// prompt query's attention.
#include <map>

#include "policies/head_reduce.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"

namespace kvbench::policies {
namespace {

// TOVA (Oren et al., 2024; schwartz-lab-NLP/TOVA): the attention row of the forward's last query,
// per KV head (the TOVA policy then averages over heads).
class LastQueryScorer : public SlotScorer {
 public:
  explicit LastQueryScorer(const nlohmann::json& p) : reduce_(parse_head_reduce(p.at("head_reduce"))) {}
  std::string name() const override { return "tova"; }
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.last_row = true;
    return r;
  }
  bool observes_only_to_compress() const override { return true; }  // last_: replaced each forward
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override {
    if (stats.last_row.defined())  // kept on the device: keep_best selects there
      last_[layer] = reduce_to_kv_heads(stats.last_row, cache.kv_heads(), reduce_).to(torch::kFloat32);
  }
  int64_t recent(int64_t) const override { return 0; }
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor&) override {
    return observed_row(last_, layer, cache);
  }

 private:
  HeadReduce reduce_;
  std::map<int64_t, torch::Tensor> last_;
};

const ScorerRegistration scorer({"tova", {head_reduce_param()},
                                 [](const nlohmann::json& p) { return std::make_unique<LastQueryScorer>(p); }});


const PolicyRegistration registration({
    "tova",
    "Last query's attention averaged over heads; the same tokens kept on every head",
    "TOVA (Oren et al. 2024, schwartz-lab-NLP/TOVA)",
    {},
    [](const nlohmann::json& p) {
      return std::make_unique<ScoredPolicy>("tova", make_scorer("tova", p), /*same_for_all_heads=*/true);
    },
    "",
    "tova"});

}  // namespace
}  // namespace kvbench::policies
