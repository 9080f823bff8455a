// ThinKPress (Xu et al., "ThinK: Thinner Key Cache by Query-Driven Pruning", 2024;
// kvpress/presses/think_press.py): prunes key channels, not tokens. After the prefill each KV head
// scores its channels by mean(q²) of the last `think_window_size` queries (rotated, averaged over
// the group) times mean(k²) of the cached keys, and zeroes its int(d · key_channel_compression_ratio)
// lowest channels in every cached key. As kvpress, the keys keep their shape (no memory saved) and
// later tokens keep all their channels. ComposedPress([SnapKVPress(), ThinKPress()]) (snap_think)
// runs SnapKV's token eviction first and ThinK on the keys it kept.
#include <map>

#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

class ThinKPress : public Policy {
 public:
  // `tokens`: the policy that evicts tokens before the channels are pruned (snap_think), or null.
  ThinKPress(std::string name, std::unique_ptr<Policy> tokens, const nlohmann::json& p)
      : name_(std::move(name)), tokens_(std::move(tokens)),
        ratio_(p.at("key_channel_compression_ratio")), window_(p.at("think_window_size")) {}
  std::string name() const override { return name_; }
  StatsRequest wants() const override {
    StatsRequest r = tokens_ ? tokens_->wants() : StatsRequest{};
    r.queries_before_rope = true;
    return r;
  }
  void begin(const SequenceInfo& info) override {
    if (!tokens_ && !info.unlimited())
      throw std::invalid_argument(name_ + " keeps every token (it prunes key channels: key_channel_compression_ratio); "
                                          "run it with --budget full, or use kvpress:snap_think");
    Policy::begin(info);
    if (tokens_) tokens_->begin(info);
    query_norms_.clear();
  }
  int64_t layer_budget(int64_t layer) const override { return tokens_ ? tokens_->layer_budget(layer) : info_.budget; }
  // query_norms_: the prefill's, read by its compress(); the token policy speaks for itself.
  bool observes_only_to_compress() const override { return !tokens_ || tokens_->observes_only_to_compress(); }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    if (tokens_) tokens_->observe(layer, cache, stats, phase);
    if (phase != Phase::kPrefill || !stats.queries_before_rope.defined() || !stats.rotate) return;
    const torch::Tensor& q = stats.queries_before_rope;  // [heads, T, d]
    const int64_t w = std::min(window_, q.size(1));
    const torch::Tensor rotated = stats.rotate(q.narrow(1, q.size(1) - w, w), stats.position_end - w);
    query_norms_[layer] = mean_over_groups(rotated.to(torch::kFloat32).pow(2).mean(1), cache.kv_heads());  // [kv_heads, d]
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (tokens_) tokens_->compress(layer, cache, phase);
    if (phase == Phase::kPrefillBlock) throw std::invalid_argument(name_ + " prunes the prompt's keys once: use --protocol oneshot");
    const int64_t pruned = static_cast<int64_t>(static_cast<double>(cache.head_dim()) * ratio_);
    if (phase != Phase::kPrefill || pruned <= 0) return;
    const auto found = query_norms_.find(layer);
    if (found == query_norms_.end()) throw std::logic_error(name_ + ": compress() without the layer's queries");
    torch::Tensor keys = cache.keys();  // [kv_heads, n, d], a view of the cache
    torch::Tensor valid = cache.all_valid() ? torch::Tensor() : cache.valid().unsqueeze(2).to(torch::kFloat32);
    torch::Tensor squares = keys.to(torch::kFloat32).pow(2);
    // kvpress averages over the k_len keys it holds: a ragged head's own tokens.
    const torch::Tensor key_norms = valid.defined() ? (squares * valid).sum(1) / valid.sum(1).clamp_min(1) : squares.mean(1);
    const torch::Tensor channel_scores = found->second.to(key_norms.device()) * key_norms;  // [kv_heads, d]
    const torch::Tensor lowest = keys.device().is_cpu() ? top_k_mask(channel_scores.neg(), pruned) : top_k_mask_by_ops(channel_scores.neg(), pruned);
    keys.masked_fill_(lowest.unsqueeze(1), 0);
  }

 private:
  std::string name_;
  std::unique_ptr<Policy> tokens_;
  double ratio_;
  int64_t window_;
  std::map<int64_t, torch::Tensor> query_norms_;  // per layer: [kv_heads, d], mean q² of the window
};

params::Params think_params() {
  return {params::Param::number("key_channel_compression_ratio", 0.0,
                                "share of each KV head's key channels zeroed (kvpress's evaluate.py requires it; 0: none)", 0, 1),
          params::Param::integer("think_window_size", 32, "last queries whose channel magnitudes score the channels (kvpress: window_size)", 1)};
}

// kvpress:think, and `think` (a press new to kvbench).
const bool think_registered = [] {
  for (const char* name : {"kvpress:think", "think"})
    PolicyRegistration({name, "ThinK: each KV head's least important key channels zeroed after the prefill (tokens all kept)",
                        "Xu et al. 2024 (arXiv 2407.21018); kvpress think_press.py", think_params(),
                        [name](const nlohmann::json& p) { return std::make_unique<ThinKPress>(name, nullptr, p); }});
  return true;
}();

const PolicyRegistration snap_think_registration(
    {"kvpress:snap_think", "ComposedPress([SnapKVPress(), ThinKPress()]): SnapKV's tokens, then ThinK's channels of them",
     "kvpress composed_press.py, snapkv_press.py, think_press.py (PRESS_REGISTRY snap_think)", think_params(),
     [](const nlohmann::json& p) {
       return std::make_unique<ThinKPress>("kvpress:snap_think",
                                           std::make_unique<ScoredPolicy>("kvpress:snapkv", make_scorer("kvpress:snapkv", p)), p);
     },
     "", "kvpress:snapkv"});

}  // namespace
}  // namespace kvbench::policies::kvpress
