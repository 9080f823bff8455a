#pragma once
// kvpress's presses (NVIDIA/kvpress, evaluation/evaluate_registry.py PRESS_REGISTRY, at commit
// kKvpressCommit; docs/policies-kvpress.md). A ScorerPress scores every (KV head, token) of a
// layer and each head keeps its n_kept best: in kvbench that is ScoredPolicy with the press as
// its SlotScorer, the budget (`ratio:<r>` gives kvpress's n_kept = int(k_len · (1 − r))) as n_kept.
// Each press registers itself in its own file as policy and scorer "kvpress:<key>", and under its
// bare name when that name is new to kvbench, so wrappers (Ada-KV, ...) take any press by name.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/param.hpp"
#include "policies/arrival_order.hpp"
#include "policies/layer_cache.hpp"
#include "policies/policy.hpp"
#include "policies/slot_scorer.hpp"

namespace kvbench::policies::kvpress {

inline constexpr const char* kKvpressCommit = "8bb29b9c3078452a86d692f29123fa6c793e2b05";
inline constexpr const char* kPrefix = "kvpress:";

struct PressInfo {
  std::string key;      // the PRESS_REGISTRY key: policy and scorer "kvpress:<key>"
  std::string summary;  // one line
  std::string source;   // the paper and kvpress's file
  params::Params params;
  std::function<std::unique_ptr<SlotScorer>(const nlohmann::json& params)> make;
  bool bare_name = false;  // a press new to kvbench: "<key>" names it too
  // false where the registry key names a wrapped press (kvpress's "expected_attention" is
  // AdaKVPress(ExpectedAttentionPress(epsilon=1e-2))): only the bare name is registered here.
  bool prefixed = true;
};

struct PressRegistration {
  explicit PressRegistration(PressInfo info);
};

// A press that needs no attention statistics and protects nothing on its own.
class Press : public SlotScorer {
 public:
  StatsRequest wants() const override { return {}; }
  void observe(int64_t, LayerCache&, const AttentionStats&, Phase) override {}
  int64_t recent(int64_t) const override { return 0; }
};

// A kvpress wrapper (AdaKVPress, ChunkKVPress, BlockPress): a policy around a press, which sees
// every statistic the press asked for and decides what the layer keeps from its scores.
class WrapperPolicy : public Policy {
 public:
  WrapperPolicy(std::string name, std::unique_ptr<SlotScorer> press) : name_(std::move(name)), press_(std::move(press)) {}
  std::string name() const override { return name_; }
  StatsRequest wants() const override { return press_->wants(); }
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    press_->begin(info);
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    press_->observe(layer, cache, stats, phase);
  }

 protected:
  SlotScorer& press() { return *press_; }
  const SlotScorer& press() const { return *press_; }

 private:
  std::string name_;
  std::unique_ptr<SlotScorer> press_;
};

// A wrapper registered around one press (`press`: the registry's key fixes it) or, with `press`
// empty, around any registered press its "press" parameter names (default `default_press`); the
// press's parameters join the wrapper's own, with `press_defaults` overriding the press's defaults.
// Listed as "<kind> around <press>: <what>".
struct WrapperInfo {
  std::string name, kind, what, source;
  params::Params params;  // the wrapper's own
  std::string press;
  std::string default_press = "kvpress:snapkv";
  nlohmann::json press_defaults = nlohmann::json::object();
  std::string reads_device = {};
  std::function<std::unique_ptr<Policy>(const std::string& name, std::unique_ptr<SlotScorer> press, const nlohmann::json& params)> make;
};
void register_wrapper(const WrapperInfo& info);
// The wrapper's own parameters, with the "press" parameter first when the press is not fixed.
params::Params wrapper_params(const WrapperInfo& info);

// AdaKVPress's safeguard (kvpress adakv_press.py, criticalkv_press.py): each head keeps at least
// its int(B·alpha) best tokens.
// DecodingPress's compression_interval (kvpress:decoding*, kvpress:compression_ratio_decoding).
params::Param compression_interval_param();
params::Param alpha_safeguard_param();  // a function: registrations in other files run at static init
inline constexpr const char* kAdaReadsDevice = "its ragged eviction sizes the cache by the longest head";
inline int64_t ada_safe(int64_t budget, double alpha) { return static_cast<int64_t>(static_cast<double>(budget) * alpha); }
// The most one head can hold under Ada-KV's allocation: all the layer's tokens but the other
// heads' safe ones.
int64_t ada_head_capacity(const SequenceInfo& info, double alpha);

// A parameter declared nullable (Param::or_null): nullopt where it is null.
template <typename T>
std::optional<T> nullable(const nlohmann::json& value) {
  return value.is_null() ? std::nullopt : std::optional<T>(value.get<T>());
}

// [heads, n] per query head -> [kv_heads, n], each KV head the mean of its group of query heads
// (kvpress: scores.view(bsz, kv_heads, groups, n).mean(2)).
torch::Tensor mean_over_groups(const torch::Tensor& scores, int64_t kv_heads);

}  // namespace kvbench::policies::kvpress
