// DMSPress (kvpress/presses/dms_press.py; after Łańcucki et al., "Inference-Time Hyper-Scaling
// with KV Cache Compression" (DMS), 2025, dense-prefill form without DMS's trained evictors): a
// threshold on a press's scores instead of a budget. Each token is judged once, when it leaves the
// window of the `sliding_window_size` newest tokens: a score below `threshold` evicts it from that
// head (heads ragged; kvpress masks). At the prefill every token but the newest window is judged;
// during generation only with `decoding`. A judged token that stayed scored ≥ threshold, so
// "evict every token outside the window scored below the threshold" judges each token once. The
// kept count depends on the input: the job's budget must be "full".
#include <cmath>

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

void register_dms(const std::string& name, const std::string& press, const nlohmann::json& press_defaults, const std::string& summary) {
  params::Params own = dms_params();
  if (press.empty()) own.insert(own.begin(), params::Param::text("press", "kvpress:kvzap", "the registered press whose scores are thresholded (its parameters join these)"));
  PolicyRegistration({name, summary, "kvpress dms_press.py (after Łańcucki et al. 2025, arXiv 2506.05345)", own,
                      [name, press](const nlohmann::json& p) {
                        return std::make_unique<DmsPress>(name, make_scorer(press.empty() ? p.at("press").get<std::string>() : press, p), p);
                      },
                      "its victims are counted on the host", press, press.empty() ? "press" : "", press_defaults});
}

const bool dms_registered = [] {
  register_dms("kvpress:dms", "", nlohmann::json::object(), "A threshold on any press's scores: tokens leaving the window scored below it go");
  register_dms("kvpress:kvzap_linear", "kvpress:kvzap", {{"kvzap_type", "linear"}}, "DMSPress(press=KVzapPress(model_type=\"linear\"))");
  register_dms("kvpress:kvzap_mlp", "kvpress:kvzap", nlohmann::json::object(), "DMSPress(press=KVzapPress(model_type=\"mlp\"))");
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
