#pragma once
// Scores that depend on token order (pooling over neighbours, windows of consecutive tokens) are
// computed in arrival order, whatever slots the tokens sit in (SlotOrder::kAny) and whatever holes
// a ragged head has (Ada-KV), as the references' packed per-head caches hold them.
#include <torch/torch.h>

#include "policies/layer_cache.hpp"

namespace kvbench::policies {

// The slots of every head in arrival order, the valid ones first; the identity on a cache in
// arrival order without holes.
class ArrivalOrder {
 public:
  explicit ArrivalOrder(const LayerCache& cache);
  // [kv_heads, n, ...] in slot order -> in arrival order.
  torch::Tensor gather(const torch::Tensor& per_slot) const;
  // [kv_heads, n] scores in arrival order -> in slot order.
  torch::Tensor scatter(const torch::Tensor& per_token) const;

 private:
  torch::Tensor perm_;  // [kv_heads, n] int64; undefined: the identity
};

}  // namespace kvbench::policies
