// StreamingLLM (Xiao et al., "Efficient Streaming Language Models with Attention Sinks", ICLR
// 2024; mit-han-lab/streaming-llm, StartRecentKVCache with start_size = 4): the first `sinks`
// tokens (attention sinks, 4 in the paper) plus the most recent B − sinks tokens, the same on every
// head. Positions are assigned inside the cache (the reference's pos-shift, `positions:
// cache_slot`, default), so they never leave the trained range however long the stream;
// `positions: original` keeps the original positions (which break beyond the trained context).
// The sinks count inside the budget; when B ≤ sinks the sinks shrink to B − 1 so the newest
// token is always kept (B = 1: the newest token only).
#include <algorithm>
#include <map>

#include "policies/keep_scored.hpp"
#include "policies/registry.hpp"
#include "policies/slot_ages.hpp"

namespace kvbench::policies {
namespace {

class StreamingLlmPolicy : public Policy {
 public:
  explicit StreamingLlmPolicy(const nlohmann::json& p)
      : sinks_(p.at("sinks")), mode_(p.at("positions") == "original" ? PositionMode::kOriginal : PositionMode::kCacheSlot) {}
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    ages_.clear();
  }
  std::string name() const override { return "streaming_llm"; }
  PositionMode position_mode() const override { return mode_; }
  // cache_slot positions are the ranks of the original positions (models/attention.cpp).
  bool slot_order_free() const override { return true; }
  void compress(int64_t layer, LayerCache& cache, Phase) override {
    const int64_t budget = std::max<int64_t>(1, info_.budget);
    if (fits_budget(cache, budget)) return;
    const int64_t sinks = std::min(sinks_, budget - 1);
    if (cache.all_valid() && cache.slot_order() == SlotOrder::kAny && cache.homogeneous()) {
      ages_[layer].evict(cache, sinks, cache.size() - budget);  // the oldest after the sinks
      return;
    }
    if (cache.all_valid()) {  // the common case: one slice for every head
      const int64_t n = cache.size();
      cache.keep(torch::cat({torch::arange(sinks, torch::kInt64), torch::arange(n - (budget - sinks), n, torch::kInt64)}).unsqueeze(0));
      return;
    }
    torch::Tensor keep = oldest_valid(cache, sinks).logical_or(newest_valid(cache, budget - sinks));
    keep_best(cache, torch::zeros({1, cache.size()}), budget, keep);
  }

 private:
  std::map<int64_t, SlotAges> ages_;  // per layer: slots oldest first (kAny caches)
  int64_t sinks_;
  PositionMode mode_ = PositionMode::kCacheSlot;
};

const PolicyRegistration registration({
    "streaming_llm",
    "Attention sinks (first tokens) + recent window, positions inside the cache",
    "StreamingLLM (Xiao et al., ICLR 2024; mit-han-lab/streaming-llm StartRecentKVCache, start_size 4)",
    {params::Param::integer("sinks", 4, "attention-sink tokens (inside the budget)", 0),
     params::Param::choice("positions", "cache_slot", {"cache_slot", "original"}, "cache_slot (pos-shift) or original")},
    [](const nlohmann::json& p) { return std::make_unique<StreamingLlmPolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
