#pragma once
// A policy that is another policy with something added (timing, checks, records): every call goes
// to the inner policy, so a wrapper overrides only what it adds, and a virtual added to Policy is
// forwarded here once instead of in each wrapper (a wrapper that misses one silently changes the
// runtime's behaviour: the cache layout, the statistics, the skipped observations).
#include <memory>
#include <string>

#include "policies/policy.hpp"

namespace kvbench::policies {

class ForwardingPolicy : public Policy {
 public:
  explicit ForwardingPolicy(Policy& inner) : inner_(inner) {}
  explicit ForwardingPolicy(std::unique_ptr<Policy> owned) : owned_(std::move(owned)), inner_(*owned_) {}

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
    inner_.observe(layer, cache, stats, phase);
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override { inner_.compress(layer, cache, phase); }
  int64_t layer_budget(int64_t layer) const override { return inner_.layer_budget(layer); }
  ContextRescoring* rescoring() override { return inner_.rescoring(); }
  std::string query_delimiter() const override { return inner_.query_delimiter(); }

 protected:
  Policy& inner() { return inner_; }
  const Policy& inner() const { return inner_; }

 private:
  std::unique_ptr<Policy> owned_;  // set when the wrapper owns the inner policy
  Policy& inner_;
};

}  // namespace kvbench::policies
