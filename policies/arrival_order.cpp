#include "policies/arrival_order.hpp"

#include <vector>

#include "policies/selection.hpp"

namespace kvbench::policies {

ArrivalOrder::ArrivalOrder(const LayerCache& cache) {
  if (cache.in_arrival_order() && cache.all_valid()) return;
  torch::Tensor perm = cache.arrival_order().expand({cache.kv_heads(), cache.size()});
  perm_ = cache.all_valid() ? perm.contiguous() : valid_first(perm, cache.valid());
}

torch::Tensor ArrivalOrder::gather(const torch::Tensor& per_slot) const {
  if (!perm_.defined()) return per_slot;
  torch::Tensor index = perm_;
  while (index.dim() < per_slot.dim()) index = index.unsqueeze(-1);
  std::vector<int64_t> sizes = per_slot.sizes().vec();
  return per_slot.gather(1, index.expand(sizes));
}

torch::Tensor ArrivalOrder::scatter(const torch::Tensor& per_token) const {
  if (!perm_.defined()) return per_token;
  return torch::empty_like(per_token).scatter_(1, perm_, per_token);
}

}  // namespace kvbench::policies
