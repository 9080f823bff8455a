// Random (+ local): the most recent `recent_ratio`·B tokens are kept, the rest of the budget is a
// uniformly random subset of the older tokens, redrawn at every eviction (RoCo/EasyKV's "Random"
// baseline, Ren & Zhu 2024, with H2O's recent window; recent_ratio 0 gives RoCo's pure Random).
// Deterministic: the draws come from a std::mt19937_64 (fully specified by the C++ standard)
// seeded with SequenceInfo.seed, the layer and the layer's eviction count, so the same seed gives
// the same cache on every platform. `per_head` draws independently per KV head (default: the same
// tokens on every head).
#include <cmath>
#include <map>
#include <random>

#include "policies/keep_scored.hpp"
#include "policies/registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies {
namespace {

class RandomPolicy : public Policy {
 public:
  explicit RandomPolicy(const nlohmann::json& p) : recent_ratio_(p.at("recent_ratio")), per_head_(p.at("per_head")) {}
  std::string name() const override { return "random"; }
  bool slot_order_free() const override { return true; }
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    evictions_.clear();
  }
  void compress(int64_t layer, LayerCache& cache, Phase) override {
    const int64_t budget = std::max<int64_t>(1, info_.budget);
    if (fits_budget(cache, budget)) return;
    const int64_t recent = std::min<int64_t>(budget, static_cast<int64_t>(std::floor(recent_ratio_ * budget)));
    const int64_t rows = per_head_ ? cache.kv_heads() : 1, n = cache.size();
    // seed_seq takes 32-bit words: the 64-bit seed goes in as two.
    std::seed_seq seq{static_cast<uint32_t>(info_.seed), static_cast<uint32_t>(info_.seed >> 32),
                      static_cast<uint32_t>(layer), static_cast<uint32_t>(evictions_[layer]++)};
    std::mt19937_64 rng(seq);
    torch::Tensor draws = torch::empty({rows, n}, torch::kFloat32);
    auto s = draws.accessor<float, 2>();
    for (int64_t r = 0; r < rows; ++r)  // uniform [0, 1) in double, ranked in float32
      for (int64_t j = 0; j < n; ++j) s[r][j] = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-53);
    // Drawn on the host, ranked on the cache's device: the host never reads the device.
    torch::Tensor scores = host_tensor_on(draws, cache.keys().device());
    // The j-th draw belongs to the j-th oldest token, whatever slot it sits in.
    if (!cache.in_arrival_order()) {
      torch::Tensor perm = cache.arrival_order();
      const int64_t r = std::max(rows, perm.size(0));
      scores = torch::empty({r, n}, scores.options()).scatter_(1, perm.expand({r, n}), scores.expand({r, n}));
    }
    keep_best(cache, scores, budget, newest_valid(cache, recent));
  }

 private:
  double recent_ratio_;
  bool per_head_;
  std::map<int64_t, uint64_t> evictions_;
};

const PolicyRegistration registration({
    "random",
    "Random eviction outside a recent window (seeded, deterministic)",
    "Random (RoCo/EasyKV baselines, Ren & Zhu 2024) + H2O's recent window",
    {params::Param::number("recent_ratio", 0.5, "share of B kept as the recent window", 0, 1),
     params::Param::flag("per_head", false, "independent draws per KV head")},
    [](const nlohmann::json& p) { return std::make_unique<RandomPolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
