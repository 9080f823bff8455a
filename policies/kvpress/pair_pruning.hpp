#pragma once
// The budget of kvpress's KVzip family (kvzip_press.py, fastkvzip_press.py compress_post): every
// layer scores each (KV head, token) pair of the prompt; the int(L·Hkv·n·r) lowest over all layers
// are evicted (layerwise: int(Hkv·n·r) in every layer), each layer evicting its lowest over (head,
// token), ties to the later token (so the older one stays, as kvbench's selections keep it). A token
// budget B is r = 1 − B/n of every head.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "policies/policy.hpp"

namespace kvbench::policies::kvpress {

struct PairPruning {
  std::vector<torch::Tensor> pruned;       // per layer: [Hkv · n] bool on the CPU, the pairs evicted
  std::vector<std::vector<int64_t>> kept;  // per layer, per KV head: the tokens it keeps
};

// `scores`: per layer [Hkv, n] float on the CPU.
PairPruning prune_lowest_pairs(const std::vector<torch::Tensor>& scores, const SequenceInfo& info, bool layerwise);

// Head `head`'s kept positions (ascending, int64 on the CPU) in a layer's pruned mask over n tokens.
torch::Tensor kept_of_head(const torch::Tensor& pruned, int64_t head, int64_t n);

}  // namespace kvbench::policies::kvpress
