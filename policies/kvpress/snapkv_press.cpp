// SnapKVPress (Li et al. 2024; kvpress/presses/snapkv_press.py): the attention of the last
// `window_size` queries over the tokens before them, averaged over those queries, smoothed by
// avg_pool1d (kernel `kernel_size`, zero padding counted), averaged over each KV head's group of
// query heads; the window itself is kept (kvpress pads its scores with max + 1). kvbench's bare
// `snapkv` follows FasterDecoding/SnapKV (window 32, max-pool 7, K/V repeated to the query heads).
// Under stream/decode protocols the window is the forward's own queries (kvpress compresses only
// the prefill).
#include <map>

#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/kvpress/snapkv_press.hpp"

namespace kvbench::policies::kvpress {
namespace {

class SnapKvPress : public Press {
 public:
  explicit SnapKvPress(const nlohmann::json& p, std::string name = "kvpress:snapkv")
      : name_(std::move(name)), window_(p.at("window_size")), kernel_(p.at("kernel_size")) {}
  std::string name() const override { return name_; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.window = window_;
    return r;
  }
  bool observes_only_to_compress() const override { return true; }  // mean_rows_: replaced each forward
  void observe(int64_t layer, LayerCache&, const AttentionStats& stats, Phase) override {
    if (stats.window_rows.defined()) mean_rows_[layer] = stats.window_rows.mean(1);  // [heads, n]
  }
  int64_t recent(int64_t budget) const override { return std::min(window_, budget); }
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor& protected_slots) override {
    const torch::Tensor& rows = observed_row(mean_rows_, layer, cache);
    torch::Tensor scores = mean_over_groups(rows, cache.kv_heads());
    // Pooled over the tokens before the window alone: the window's columns become the zero padding
    // kvpress's avg_pool1d sees past the prefix's end.
    const ArrivalOrder order(cache);
    torch::Tensor prefix = order.gather(scores * protected_slots.logical_not().to(scores.dtype()));
    return order.scatter(pool_scores(prefix, "avg", kernel_));
  }

 private:
  std::string name_;
  int64_t window_, kernel_;
  std::map<int64_t, torch::Tensor> mean_rows_;  // per layer: [heads, n], the window's mean row
};

}  // namespace

params::Params snapkv_press_params() {
  return {params::Param::integer("window_size", 64, "observation window: the last queries, kept", 1),
          params::Param::integer("kernel_size", 5, "avg_pool1d kernel over the tokens before the window", 1)};
}

std::unique_ptr<SlotScorer> make_snapkv_press(const nlohmann::json& p, const std::string& name) {
  if (p.at("kernel_size").get<int64_t>() % 2 == 0)
    throw std::invalid_argument(name + ": kernel_size must be odd (avg_pool1d with padding kernel/2 keeps the length)");
  return std::make_unique<SnapKvPress>(p, name);
}

namespace {
const PressRegistration snapkv_registration(
    {"snapkv", "Window attention over the earlier tokens, avg-pooled, group-averaged; the window kept",
     "Li et al. 2024 (arXiv 2404.14469); kvpress snapkv_press.py", snapkv_press_params(),
     [](const nlohmann::json& p) { return make_snapkv_press(p, "kvpress:snapkv"); }});
}  // namespace
}  // namespace kvbench::policies::kvpress
