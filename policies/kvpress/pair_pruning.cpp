#include "policies/kvpress/pair_pruning.hpp"

#include <algorithm>

#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

// The `k` lowest of `values` (1-D), ties to the later index, as flat indices.
torch::Tensor lowest_pairs(const torch::Tensor& values, int64_t k) {
  const int64_t n = values.numel();
  return lowest_scored_slots(values.view({1, n}), torch::arange(n, torch::kInt64).view({1, n}), std::clamp<int64_t>(k, 0, n))[0];
}

}  // namespace

PairPruning prune_lowest_pairs(const std::vector<torch::Tensor>& scores, const SequenceInfo& info, bool layerwise) {
  const int64_t L = static_cast<int64_t>(scores.size()), kv = info.n_kv_heads, n = info.prompt_len, per_layer = kv * n;
  // kvpress's int(pairs · r); a token budget B is r = 1 − B/n of every head.
  auto pruned_of = [&](int64_t pairs) {
    return info.compression_ratio ? static_cast<int64_t>(static_cast<double>(pairs) * *info.compression_ratio)
                                  : pairs / n * (n - std::min(info.budget, n));
  };
  std::vector<int64_t> counts(L, pruned_of(per_layer));
  if (!layerwise) {
    const torch::Tensor all = torch::stack(scores).reshape(-1);
    const torch::Tensor per = torch::bincount(lowest_pairs(all, pruned_of(all.numel())).div(per_layer, "floor"), {}, L);
    for (int64_t l = 0; l < L; ++l) counts[l] = per[l].item<int64_t>();
  }
  PairPruning out;
  for (int64_t l = 0; l < L; ++l) {
    out.pruned.push_back(torch::zeros({per_layer}, torch::kBool).index_fill_(0, lowest_pairs(scores[l].reshape(-1), counts[l]), true));
    const torch::Tensor per_head = n - out.pruned.back().view({kv, n}).sum(1);
    std::vector<int64_t>& kept = out.kept.emplace_back(kv);
    for (int64_t h = 0; h < kv; ++h) kept[h] = per_head[h].item<int64_t>();
  }
  return out;
}

torch::Tensor kept_of_head(const torch::Tensor& pruned, int64_t head, int64_t n) {
  return pruned.narrow(0, head * n, n).logical_not().nonzero().squeeze(1);
}

}  // namespace kvbench::policies::kvpress
