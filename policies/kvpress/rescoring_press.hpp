#pragma once
// What kvpress's presses that rescore a prompt once share (KVComposePress, KVzipPress): the session
// runs their scoring forwards after the prompt (policies/context_rescoring.hpp) and then compresses
// every layer; the first compress() plans how many tokens every layer's heads keep from all layers'
// scores (their budget is global), and each layer then keeps its heads' own. Outside the prefill
// they refuse, with one error naming --protocol oneshot, the first time they must evict.
#include <algorithm>
#include <string>
#include <vector>

#include "policies/context_rescoring.hpp"
#include "policies/policy.hpp"

namespace kvbench::policies::kvpress {

class RescoringPress : public Policy, public ContextRescoring {
 public:
  // `scoring` says how the press scores, for the refusal: "by a second forward after it".
  RescoringPress(std::string name, std::string scoring) : name_(std::move(name)), scoring_(std::move(scoring)) {}
  std::string name() const override { return name_; }
  ContextRescoring* rescoring() override { return this; }
  StatsRequest wants() const override { return in_scoring_ ? scoring_wants() : StatsRequest{}; }  // the prefill needs nothing
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    in_scoring_ = false;
    kept_.clear();
    forget();
  }
  void begin_scoring_input(size_t index) override {
    in_scoring_ = true;
    input_ = index;
  }
  int64_t layer_budget(int64_t layer) const override {
    if (kept_.empty()) return info_.budget;
    return *std::max_element(kept_[layer].begin(), kept_[layer].end());
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (info_.unlimited()) return;
    if (phase != Phase::kPrefill) {
      if (cache.max_head_length() > layer_budget(layer))
        throw std::invalid_argument(name_ + " scores a whole prompt once, " + scoring_ + ": run it under --protocol oneshot");
      return;
    }
    if (!scored()) throw std::invalid_argument(name_ + " needs its scoring forwards, which an InferenceSession runs; they were not run");
    in_scoring_ = false;
    if (kept_.empty()) kept_ = plan();
    // Each head's kept positions, ascending, padded to the layer's widest head.
    const int64_t kv = cache.kv_heads(), widest = layer_budget(layer);
    std::vector<int64_t> idx(kv * widest, 0);
    for (int64_t h = 0; h < kv; ++h) {
      const torch::Tensor kept = kept_positions(layer, h, kept_[layer][h]).contiguous();
      std::copy(kept.data_ptr<int64_t>(), kept.data_ptr<int64_t>() + kept.numel(), idx.begin() + h * widest);
    }
    const auto device = cache.keys().device();
    cache.keep(torch::tensor(idx, torch::kInt64).view({kv, widest}).to(device), torch::tensor(kept_[layer], torch::kInt64).to(device));
  }

 protected:
  virtual StatsRequest scoring_wants() const = 0;
  virtual void forget() = 0;        // a new prompt: drop the last one's scores
  virtual bool scored() const = 0;  // the scoring forwards were observed
  // Per layer, per KV head: how many tokens it keeps, from every layer's scores.
  virtual std::vector<std::vector<int64_t>> plan() = 0;
  // The `count` positions head `head` of `layer` keeps, ascending int64 on the CPU.
  virtual torch::Tensor kept_positions(int64_t layer, int64_t head, int64_t count) = 0;

  bool in_scoring() const { return in_scoring_; }
  size_t scoring_input() const { return input_; }
  const std::string& press_name() const { return name_; }

 private:
  std::string name_, scoring_;
  bool in_scoring_ = false;
  size_t input_ = 0;
  std::vector<std::vector<int64_t>> kept_;
};

}  // namespace kvbench::policies::kvpress
