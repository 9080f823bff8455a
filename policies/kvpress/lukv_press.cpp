// LUKVPress (Predicting Future Utility: Global Combinatorial Optimization for Task-Agnostic KV
// Cache Eviction, 2026, arXiv 2602.08585; kvpress/presses/lukv_press.py): per-(layer, KV head)
// budgets from a precomputed curve around any press. The curve [99, layers, kv_heads] gives, for
// compression ratio r, each head's prune ratio p (row round(100·r) − 1); head h of a layer of n
// tokens keeps (1 − p_h)·n, rounded so that the layer keeps round(Σ) tokens (floors, the remainder
// to the largest fractional parts), at least 1 each. Within a head the press's scores rank the
// tokens, the first `sink` and last `window` protected (scored max + 1). kvpress masks; kvbench
// evicts (ragged heads). The curve is the published .npy (baidu-baige/LU-KV evaluation/curve_data),
// read from the path the user gives.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"
#include "tensorio/npy.hpp"

namespace kvbench::policies::kvpress {
namespace {

constexpr const char* kLlama31Curve =
    "https://raw.githubusercontent.com/baidu-baige/LU-KV/main/evaluation/curve_data/llama-3.1-8b/"
    "ea_0.02_sink4_win1_llama_avg_ratio.npy";

torch::Tensor read_curve(const std::string& path) {
  if (path.empty())
    throw std::invalid_argument(std::string("LU-KV needs its budget curve (.npy, [99, layers, kv_heads]): kvpress's one is ") +
                                kLlama31Curve +
                                " (Llama-3.1-8B-Instruct with ExpectedAttention, epsilon 2e-2); give its path as the parameter budget_curve");
  if (!std::filesystem::exists(path)) throw std::invalid_argument("LU-KV: " + path + " does not exist (expected the budget curve .npy)");
  torch::Tensor curve = models::read_npy(path);
  if (curve.dim() != 3 || curve.size(0) != 99)
    throw std::invalid_argument("LU-KV: " + path + ": the budget curve must be [99, layers, kv_heads]");
  return curve.to(torch::kFloat32);
}

class LukvPress : public WrapperPolicy {
 public:
  LukvPress(std::string name, std::unique_ptr<SlotScorer> press, const nlohmann::json& p)
      : WrapperPolicy(std::move(name), std::move(press)), path_(p.at("budget_curve")), sink_(p.at("sink")),
        window_(p.at("window")), curve_(read_curve(path_)) {}
  void begin(const SequenceInfo& info) override {
    if (!info.unlimited() && !info.compression_ratio)
      throw std::invalid_argument(name() + "'s curve is indexed by kvpress's compression ratio: use --budget ratio:<r>");
    if (curve_.size(1) != info.n_layers || curve_.size(2) != info.n_kv_heads)
      throw std::invalid_argument(name() + ": " + path_ + " is a curve of " + std::to_string(curve_.size(1)) + " layers × " +
                                  std::to_string(curve_.size(2)) + " KV heads, the model has " + std::to_string(info.n_layers) +
                                  " × " + std::to_string(info.n_kv_heads));
    WrapperPolicy::begin(info);
  }
  // A head may keep up to the whole prompt.
  int64_t layer_budget(int64_t) const override { return info_.unlimited() ? info_.budget : std::max(info_.budget, info_.prompt_len); }

  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (phase == Phase::kPrefillBlock) throw std::invalid_argument(name() + " compresses the prompt once: use --protocol oneshot");
    if (phase != Phase::kPrefill || info_.unlimited() || *info_.compression_ratio <= 0) return;
    if (!cache.all_valid() || !cache.in_arrival_order()) throw std::logic_error(name() + ": needs the whole prompt in arrival order");
    const int64_t heads = cache.kv_heads(), n = cache.size();
    const torch::Tensor keep = keep_counts(layer, heads, n);
    torch::Tensor s = press().scores(layer, cache, torch::zeros({heads, n}, torch::kBool)).to(torch::kCPU, torch::kFloat32).expand({heads, n}).clone();
    const float protected_score = s.max().item<float>() + 1;
    if (sink_ > 0) s.narrow(1, 0, std::min(sink_, n)).fill_(protected_score);
    if (window_ > 0) s.narrow(1, std::max<int64_t>(0, n - window_), std::min(window_, n)).fill_(protected_score);
    // A stable descending order: among equal scores the older token first.
    const torch::Tensor order = std::get<1>(s.sort(/*stable=*/true, 1, /*descending=*/true));
    const torch::Tensor counts = n - keep;
    const int64_t most = counts.max().item<int64_t>();
    if (most <= 0) return;
    // Each head's victims: the last n − keep of its order, lowest first.
    cache.evict(order.flip(1).narrow(1, 0, most).contiguous().to(cache.keys().device()), counts);
  }

 private:
  // [kv_heads] int64: each head's kept tokens of a layer of n (kvpress: final_keep_per_head).
  torch::Tensor keep_counts(int64_t layer, int64_t heads, int64_t n) const {
    const int64_t row = std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(*info_.compression_ratio * 100)) - 1, 0, 98);
    const torch::Tensor ideal = (1.0 - curve_[row][layer]).clamp(0.0, 1.0) * static_cast<double>(n);  // float32, as kvpress
    const int64_t target = std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(ideal.sum().item<double>())), heads, heads * n);
    torch::Tensor keep = ideal.floor().to(torch::kInt64);
    const int64_t remainder = target - keep.sum().item<int64_t>();
    if (remainder > 0) {
      const torch::Tensor fractional = ideal - keep.to(torch::kFloat32);
      keep.index_add_(0, std::get<1>(fractional.topk(std::min(remainder, heads))), torch::ones({std::min(remainder, heads)}, torch::kInt64));
    }
    return keep.clamp(1, n);
  }

  std::string path_;
  int64_t sink_, window_;
  torch::Tensor curve_;  // [99, layers, kv_heads] prune ratios
};

// LUKVPress(press=ExpectedAttentionPress(epsilon=2e-2), sink=4, window=1), kvpress's defaults; any
// registered press through `press`.
const PolicyRegistration lukv_registration(
    {"kvpress:lukv", "Per-head budgets from LU-KV's learned curve around a press (ExpectedAttention by default)",
     "arXiv 2602.08585; kvpress lukv_press.py",
     {params::Param::text("press", "expected_attention", "the registered press whose scores rank each head's tokens (its parameters join these)"),
      params::Param::file("budget_curve", "the LU-KV budget curve: a .npy [99, layers, kv_heads] of prune ratios"),
      params::Param::integer("sink", 4, "first tokens protected", 0),
      params::Param::integer("window", 1, "last tokens protected", 0)},
     [](const nlohmann::json& p) { return std::make_unique<LukvPress>("kvpress:lukv", make_scorer(p.at("press"), p), p); },
     "its head budgets are computed on the host", "", "press", {{"epsilon", 2e-2}}});

}  // namespace
}  // namespace kvbench::policies::kvpress
