#include "policies/selection.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace kvbench::policies {

torch::Tensor mask_invalid(const LayerCache& cache, torch::Tensor scores) {
  if (cache.all_valid()) return scores;
  torch::Tensor valid = cache.valid();
  if (scores.size(0) == 1 && valid.size(0) != 1) valid = valid.all(0, /*keepdim=*/true);
  return scores.masked_fill(valid.logical_not(), -std::numeric_limits<float>::infinity());
}

torch::Tensor top_k_slots(const torch::Tensor& scores, int64_t k) {
  const int64_t n = scores.size(-1);
  k = std::min(k, n);
  // A tiny decreasing ramp breaks ties in favour of earlier slots without changing any strict order
  // that float32 can represent between distinct scores: sort is stable on (score, -slot).
  torch::Tensor order = std::get<1>(scores.to(torch::kFloat64).sort(/*stable=*/true, /*dim=*/-1, /*descending=*/true));
  torch::Tensor chosen = order.narrow(-1, 0, k);
  return std::get<0>(chosen.sort(-1));
}

torch::Tensor lowest_scored_slots(const torch::Tensor& scores, const torch::Tensor& positions, int64_t e, bool lowest_first) {
  // One int64 key per slot, (score, newest first) in lexicographic order: the float's bits mapped
  // to an order-preserving integer (negative floats reverse their bit order; + 0.0 turns -0.0
  // into +0.0) above 31 bits of reversed position. Exact, so topk needs no tie rule of its own.
  torch::Tensor bits = (scores.to(torch::kFloat32) + 0.0f).contiguous().view(torch::kInt32).to(torch::kInt64);
  torch::Tensor ordered = torch::where(bits.ge(0), bits, bits.neg().sub(int64_t{1} << 31).sub(1));
  torch::Tensor key = ordered.mul(int64_t{1} << 32).add(positions.neg().add((int64_t{1} << 31) - 1));
  return std::get<1>(key.topk(e, -1, /*largest=*/false, /*sorted=*/lowest_first));
}

torch::Tensor top_k_mask(const torch::Tensor& scores, int64_t k) {
  const int64_t n = scores.size(-1);
  if (k <= 0) return torch::zeros(scores.sizes(), scores.options().dtype(torch::kBool));
  if (k >= n) return torch::ones(scores.sizes(), scores.options().dtype(torch::kBool));
  torch::Tensor kth = std::get<0>(scores.kthvalue(n - k + 1, -1, /*keepdim=*/true));  // the k-th largest
  torch::Tensor above = scores > kth, ties = scores == kth;
  torch::Tensor wanted = k - above.sum(-1, /*keepdim=*/true);  // ties still needed, >= 1
  return above.logical_or(ties.logical_and(ties.cumsum(-1) <= wanted));
}

torch::Tensor host_slots_on(const std::vector<int64_t>& slots, const torch::Device& device) {
  const auto n = static_cast<int64_t>(slots.size());
  auto long_cpu = torch::TensorOptions().dtype(torch::kInt64);
  if (!device.is_cuda()) return torch::tensor(slots, long_cpu).reshape({1, n}).to(device);
  torch::Tensor staged = torch::empty({1, n}, long_cpu.pinned_memory(true));
  std::copy(slots.begin(), slots.end(), staged.data_ptr<int64_t>());
  return staged.to(device, torch::kInt64, /*non_blocking=*/true);
}

void keep_top_with_recent(LayerCache& cache, const torch::Tensor& scores, int64_t budget, int64_t recent) {
  const int64_t n = cache.size();
  if (!cache.in_arrival_order()) throw std::logic_error("keep_top_with_recent: the cache's slots are not in arrival order");
  if (n <= budget && cache.all_valid()) return;
  if (cache.max_head_length() <= budget && n <= budget) return;
  budget = std::max<int64_t>(budget, 1);
  recent = std::clamp<int64_t>(recent, 0, budget);
  const int64_t older = n - recent;
  torch::Tensor s = mask_invalid(cache, scores.to(torch::kFloat32)).narrow(-1, 0, older);
  torch::Tensor heavy = top_k_slots(s, budget - recent);
  torch::Tensor tail = torch::arange(older, n, heavy.options()).reshape({1, recent}).expand({heavy.size(0), recent});
  cache.keep(torch::cat({heavy, tail}, 1));
}

}  // namespace kvbench::policies
