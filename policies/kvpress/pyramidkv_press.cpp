// PyramidKVPress (Cai et al., "PyramidKV: Dynamic KV Cache Compression based on Pyramidal
// Information Funneling", 2024; kvpress/presses/pyramidkv_press.py): SnapKVPress's scores, and
// layer budgets that shrink linearly from the first layer to the last. With q the prompt's length,
// w the window, kept = q·(1 − ratio): min = kept/β, max = 2·kept − min (when max ≥ q − w: max =
// q − w, min = 2·kept − max); layer l keeps round(max − l·(max − min)/(L − 1)) (round half to
// even, as Python); unless q ≥ max ≥ min ≥ w, every layer keeps round(kept) as SnapKVPress.
// kept is q·(1 − ratio) unrounded under a `ratio:` budget (as kvpress), else the budget in tokens.
// kvbench's bare `pyramidkv` follows KVCache-Factory's PyramidKVCluster instead.
#include <cmath>

#include "policies/kvpress/press.hpp"
#include "policies/kvpress/snapkv_press.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"

namespace kvbench::policies::kvpress {
namespace {

class PyramidKvPress : public ScoredPolicy {
 public:
  explicit PyramidKvPress(const nlohmann::json& p)
      : ScoredPolicy("kvpress:pyramidkv", make_snapkv_press(p, "kvpress:pyramidkv")),
        window_(p.at("window_size")),
        beta_(p.at("beta")) {}

  int64_t layer_budget(int64_t layer) const override {
    if (info_.unlimited()) return info_.budget;
    const double q = static_cast<double>(info_.prompt_len), w = static_cast<double>(window_);
    const double kept = info_.compression_ratio ? q * (1 - *info_.compression_ratio) : static_cast<double>(info_.budget);
    double least = kept / static_cast<double>(beta_), most = kept * 2 - least;
    if (most >= q - w) {
      most = q - w;
      least = kept * 2 - most;
    }
    if (!(q >= most && most >= least && least >= w) || info_.n_layers < 2) return std::llround(std::nearbyint(kept));
    const double step = (most - least) / static_cast<double>(info_.n_layers - 1);
    return std::llround(std::nearbyint(most - static_cast<double>(layer) * step));
  }

 private:
  int64_t window_, beta_;
};

params::Params pyramidkv_params() {
  params::Params all = snapkv_press_params();
  all.push_back(params::Param::integer("beta", 20, "the first layer's budget over the last's (the pyramid's slope)", 1));
  return all;
}

const PolicyRegistration pyramidkv_registration(
    {"kvpress:pyramidkv", "SnapKVPress's scores with layer budgets shrinking linearly with depth",
     "Cai et al. 2024 (arXiv 2406.02069); kvpress pyramidkv_press.py", pyramidkv_params(),
     [](const nlohmann::json& p) { return std::make_unique<PyramidKvPress>(p); }});

}  // namespace
}  // namespace kvbench::policies::kvpress
