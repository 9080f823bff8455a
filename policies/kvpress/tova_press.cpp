// TOVAPress (Oren et al. 2024; kvpress/presses/tova_press.py): the attention of the forward's last
// query, averaged over all query heads, ranks every token the same way on every KV head; the last
// token itself is kept (kvpress pads its score with max + 1). kvbench's bare `tova` follows
// schwartz-lab-NLP/TOVA's cache instead.
#include <map>

#include "policies/kvpress/press.hpp"

namespace kvbench::policies::kvpress {
namespace {

class TovaPress : public Press {
 public:
  std::string name() const override { return "kvpress:tova"; }
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.last_row = true;
    return r;
  }
  bool observes_only_to_compress() const override { return true; }  // mean_row_: replaced each forward
  void observe(int64_t layer, LayerCache&, const AttentionStats& stats, Phase) override {
    if (stats.last_row.defined()) mean_row_[layer] = stats.last_row.mean(0, /*keepdim=*/true);
  }
  int64_t recent(int64_t budget) const override { return std::min<int64_t>(1, budget); }
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor&) override {
    return observed_row(mean_row_, layer, cache).expand({cache.kv_heads(), cache.size()});
  }

 private:
  std::map<int64_t, torch::Tensor> mean_row_;  // per layer: [1, n]
};

const PressRegistration tova_registration({"tova", "The last query's attention averaged over all heads; the last token kept",
                                           "Oren et al. 2024 (arXiv 2401.06104); kvpress tova_press.py",
                                           {},
                                           [](const nlohmann::json&) { return std::make_unique<TovaPress>(); }});

}  // namespace
}  // namespace kvbench::policies::kvpress
