#pragma once
// KVzipPress (kvpress/presses/kvzip_press.py): the model repeats the prompt, a (KV head, token)
// scores the most attention any repeat query pays it, and a global budget evicts the lowest pairs
// (kvzip_press.cpp says how). Declared here for the presses built on it (RestoreKV).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "policies/kvpress/rescoring_press.hpp"

namespace kvbench::policies::kvpress {

class KvzipPress : public RescoringPress {
 public:
  KvzipPress(std::string name, const nlohmann::json& p);
  std::vector<std::vector<int64_t>> scoring_inputs(const std::vector<int64_t>& prompt, const PromptText* text) override;
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override;

 protected:
  StatsRequest scoring_wants() const override;
  void forget() override;
  bool scored() const override { return !scores_.empty(); }
  torch::Tensor kept_positions(int64_t layer, int64_t head, int64_t) override;
  std::vector<std::vector<int64_t>> plan() override { return plan_with(info_); }
  // Which (head, token) pairs each layer evicts under `info`'s budget (its lowest, as many as the
  // global or per-layer budget leaves it); what each head keeps follows.
  std::vector<std::vector<int64_t>> plan_with(const SequenceInfo& info);

 private:
  struct Chunk {
    int64_t begin, end;  // context positions
  };

  bool layerwise_;
  int64_t n_sink_;
  bool plus_;
  int64_t chunk_size_, postfix_;
  std::vector<Chunk> chunks_;
  std::vector<torch::Tensor> scores_;  // per layer: [Hkv, n] (kvpress's score_val)
  std::vector<torch::Tensor> pruned_;  // per layer: [Hkv · n] bool, the pairs evicted
};

// KVzip's parameters (KVzip+ normalisation on by default where `plus`).
params::Params kvzip_params(bool plus);

}  // namespace kvbench::policies::kvpress
