#pragma once
// Wraps a policy and measures the host time of its observe() and compress() calls (per-step policy
// cost for `kvbench bench`). On a GPU the calls only enqueue work, so the time is launch time
// unless the caller synchronises.
#include <chrono>
#include <memory>

#include "policies/policy.hpp"

namespace kvbench::policies {

class TimedPolicy : public Policy {
 public:
  explicit TimedPolicy(Policy& inner) : inner_(inner) {}

  std::string name() const override { return inner_.name(); }
  StatsRequest wants() const override { return inner_.wants(); }
  PositionMode position_mode() const override { return inner_.position_mode(); }
  bool slot_order_free() const override { return inner_.slot_order_free(); }
  bool observes_only_to_compress() const override { return inner_.observes_only_to_compress(); }
  double logit_scale(int64_t n_keys) const override { return inner_.logit_scale(n_keys); }
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    inner_.begin(info);
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    auto t0 = std::chrono::steady_clock::now();
    inner_.observe(layer, cache, stats, phase);
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    auto t0 = std::chrono::steady_clock::now();
    inner_.compress(layer, cache, phase);
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  int64_t layer_budget(int64_t layer) const override { return inner_.layer_budget(layer); }
  ContextRescoring* rescoring() override { return inner_.rescoring(); }
  std::string query_delimiter() const override { return inner_.query_delimiter(); }

  // Seconds spent in observe() + compress() since the last reset.
  double seconds() const { return seconds_; }
  void reset() { seconds_ = 0; }

 private:
  Policy& inner_;
  double seconds_ = 0;
};

}  // namespace kvbench::policies
