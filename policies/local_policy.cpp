// Local (recency, "window attention"): keep the last B tokens of every head. The recency baseline
// of H2O (Zhang et al., 2023, "Local"), TOVA and RoCo, and StreamingLLM's "window attention"
// (Xiao et al., ICLR 2024, Fig. 1b) when run with `positions: cache_slot` (positions re-assigned
// inside the cache like StreamingLLM, but without its attention sinks).
#include <map>

#include "policies/keep_scored.hpp"
#include "policies/registry.hpp"
#include "policies/slot_ages.hpp"

namespace kvbench::policies {
namespace {

PositionMode parse_positions(const std::string& name, const std::string& policy) {
  if (name == "original") return PositionMode::kOriginal;
  if (name == "cache_slot") return PositionMode::kCacheSlot;
  throw std::invalid_argument(policy + ": positions must be original or cache_slot, got '" + name + "'");
}

class LocalPolicy : public Policy {
 public:
  explicit LocalPolicy(const nlohmann::json& p) : mode_(parse_positions(p["positions"].get<std::string>(), "local")) {}
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    ages_.clear();
  }
  std::string name() const override { return "local"; }
  PositionMode position_mode() const override { return mode_; }
  bool slot_order_free() const override { return true; }
  void compress(int64_t layer, LayerCache& cache, Phase) override {
    const int64_t budget = std::max<int64_t>(1, info_.budget);
    if (fits_budget(cache, budget)) return;
    if (cache.all_valid() && cache.slot_order() == SlotOrder::kAny && cache.homogeneous()) {
      ages_[layer].evict(cache, 0, cache.size() - budget);  // O(evicted): the oldest slots are refilled
      return;
    }
    if (cache.all_valid()) {  // the common case: one slice for every head
      cache.keep(torch::arange(cache.size() - budget, cache.size(), torch::kInt64).unsqueeze(0));
      return;
    }
    torch::Tensor none = torch::zeros({1, cache.size()});
    keep_best(cache, none, budget, newest_valid(cache, budget));
  }

 private:
  std::map<int64_t, SlotAges> ages_;  // per layer: slots oldest first (kAny caches)
  PositionMode mode_;
};

const PolicyRegistration registration({
    "local",
    "Recency: keeps the last B tokens of every head",
    "Local / window attention (H2O, Zhang et al. 2023; StreamingLLM Fig. 1b, Xiao et al. 2024)",
    {params::Param::choice("positions", "original", {"original", "cache_slot"}, "rotate keys by original position or by cache slot")},
    [](const nlohmann::json& p) { return std::make_unique<LocalPolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
