// DMSPress (kvpress/presses/dms_press.py; after Łańcucki et al., "Inference-Time Hyper-Scaling
// with KV Cache Compression" (DMS), 2025, dense-prefill form without DMS's trained evictors): a
// threshold on a press's scores instead of a budget. Each token is judged once, when it leaves the
// window of the `sliding_window_size` newest tokens: a score below `threshold` evicts it from that
// head (heads ragged; kvpress masks). At the prefill every token but the newest window is judged;
// during generation only with `decoding`. A judged token that stayed scored ≥ threshold, so
// "evict every token outside the window scored below the threshold" judges each token once. The
// kept count depends on the input: the job's budget must be "full".
#include <cmath>
#include <tuple>
#include <vector>

#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

class DmsPress : public WrapperPolicy {
 public:
  DmsPress(std::string name, std::unique_ptr<SlotScorer> press, const nlohmann::json& p)
      : WrapperPolicy(std::move(name), std::move(press)), window_(p.at("sliding_window_size")), decoding_(p.at("decoding")) {
    if (p.at("threshold").is_null())
      throw std::invalid_argument(this->name() + " needs a threshold (kvpress's evaluate.py requires --threshold for DMSPress): "
                                                 "tokens scored below it are evicted");
    threshold_ = p.at("threshold").get<double>();
  }
  void begin(const SequenceInfo& info) override {
    if (!info.unlimited())
      throw std::invalid_argument(name() + " evicts by its threshold, not by a budget: run it with --budget full");
    WrapperPolicy::begin(info);
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (phase == Phase::kDecode && !decoding_) return;
    const int64_t heads = cache.kv_heads(), n = cache.size();
    const torch::Tensor window = newest_valid(cache, std::min(window_, n)).to(torch::kCPU);
    const torch::Tensor valid = cache.all_valid() ? torch::ones({heads, n}, torch::kBool) : cache.valid().to(torch::kCPU);
    const torch::Tensor s = press().scores(layer, cache, window).to(torch::kCPU, torch::kFloat32).expand({heads, n});
    const torch::Tensor judged = valid.logical_and(window.logical_not());
    const torch::Tensor evicted = judged.logical_and(s < threshold_);
    const torch::Tensor counts = evicted.sum(1);
    const int64_t most = counts.max().item<int64_t>();
    if (most == 0) return;
    // The evicted slots rank lowest, the others above them.
    const torch::Tensor rank = evicted.logical_not().to(torch::kFloat32);
    cache.evict(lowest_scored_slots(rank, cache.positions().to(torch::kCPU), most, /*lowest_first=*/true).to(cache.keys().device()),
                counts);
  }

 private:
  int64_t window_;
  bool decoding_;
  double threshold_ = 0;
};

params::Params dms_params() {
  return {params::Param::number("threshold", nullptr, "tokens whose score is below it are evicted (required)").or_null(),
          params::Param::integer("sliding_window_size", 128, "newest tokens never judged", 0),
          params::Param::flag("decoding", false, "judge the tokens that leave the window while generating too")};
}

const bool dms_registered = [] {
  for (const auto& [name, press, defaults] : std::vector<std::tuple<std::string, std::string, nlohmann::json>>{
           {"kvpress:dms", "", nlohmann::json::object()},
           {"kvpress:kvzap_linear", "kvpress:kvzap", {{"kvzap_type", "linear"}}},  // DMSPress(press=KVzapPress(model_type="linear"))
           {"kvpress:kvzap_mlp", "kvpress:kvzap", nlohmann::json::object()}})      // DMSPress(press=KVzapPress(model_type="mlp"))
    register_wrapper({name, "DMSPress", "tokens leaving the window scored below the threshold go",
                      "kvpress dms_press.py (after Łańcucki et al. 2025, arXiv 2506.05345)", dms_params(), press, "kvpress:kvzap",
                      defaults, "its victims are counted on the host",
                      [](const std::string& n, std::unique_ptr<SlotScorer> s, const nlohmann::json& p) {
                        return std::make_unique<DmsPress>(n, std::move(s), p);
                      }});
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
