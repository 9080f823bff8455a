#pragma once
// Wraps a policy and measures the host time of its observe() and compress() calls (per-step policy
// cost for `kvbench bench`). On a GPU the calls only enqueue work, so the time is launch time
// unless the caller synchronises.
#include <chrono>

#include "policies/forwarding_policy.hpp"

namespace kvbench::policies {

class TimedPolicy : public ForwardingPolicy {
 public:
  explicit TimedPolicy(Policy& inner) : ForwardingPolicy(inner) {}

  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    auto t0 = std::chrono::steady_clock::now();
    ForwardingPolicy::observe(layer, cache, stats, phase);
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    auto t0 = std::chrono::steady_clock::now();
    ForwardingPolicy::compress(layer, cache, phase);
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // Seconds spent in observe() + compress() since the last reset.
  double seconds() const { return seconds_; }
  void reset() { seconds_ = 0; }

 private:
  double seconds_ = 0;
};

}  // namespace kvbench::policies
