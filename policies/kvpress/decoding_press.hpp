#pragma once
// DecodingPress (kvpress/presses/decoding_press.py): compression while generating, not at the
// prefill. Every `compression_interval` decode steps (per layer) the press scores the whole cache
// — prompt and generated tokens — and each head keeps its best `target_size` tokens (kvpress
// searches the compression ratio whose int(n · (1 − r)) is exactly target_size): kvbench's budget
// is that target_size. The prompt itself is never compressed, so between compressions a layer
// holds up to max(prompt, budget) + interval − 1 tokens (layer_budget). Runs under the `decode`
// protocol (the others never compress a decode step). kvpress's presses that read a window of
// queries see its buffered hidden states (the last `hidden_states_buffer_size` steps); kvbench's
// see the current step's query (exact for knorm, keydiff, streaming_llm and tova).
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "policies/policy.hpp"

namespace kvbench::policies::kvpress {

// `inner` is the policy that cuts the cache to the budget when an interval is up: ScoredPolicy
// around the press (ScorerPress.compress), or kvpress:adakv around it (an AdaKVPress base).
class DecodingPress : public Policy {
 public:
  DecodingPress(std::string name, std::unique_ptr<Policy> inner, const nlohmann::json& p)
      : name_(std::move(name)), inner_(std::move(inner)), interval_(p.at("compression_interval")) {}
  std::string name() const override { return name_; }
  StatsRequest wants() const override { return inner_->wants(); }
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    inner_->begin(info);
    steps_.clear();
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    inner_->observe(layer, cache, stats, phase);
  }
  int64_t layer_budget(int64_t layer) const override {
    if (info_.unlimited()) return info_.budget;
    return std::max(info_.prompt_len, inner_->layer_budget(layer)) + interval_ - 1;
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (phase != Phase::kDecode || ++steps_[layer] < interval_) return;
    steps_[layer] = 0;
    before_compression(layer);
    inner_->compress(layer, cache, phase);
  }

 protected:
  // When a layer's interval is up, just before `inner` cuts it (CompressionRatioDecodingPress sets
  // its target here).
  virtual void before_compression(int64_t layer) { (void)layer; }

 private:
  std::string name_;
  std::unique_ptr<Policy> inner_;
  int64_t interval_;
  std::map<int64_t, int64_t> steps_;  // per layer: decode steps since the last compression
};

}  // namespace kvbench::policies::kvpress
