#include "policies/selection.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "policies/order_statistic.hpp"

namespace kvbench::policies {

namespace {

// top_k_mask of CPU rows [rows, n] given each row's k-th largest: one pass counts the values
// above it, a second marks them and the first ties by column.
template <typename T>
torch::Tensor top_k_mask_cpu(const torch::Tensor& rows_in, const torch::Tensor& kth_in, int64_t k) {
  const torch::Tensor rows = rows_in.contiguous(), kth = kth_in.contiguous();
  const int64_t count = rows.size(0), n = rows.size(1);
  torch::Tensor mask = torch::empty({count, n}, torch::kBool);
  bool* out = mask.data_ptr<bool>();
  for (int64_t r = 0; r < count; ++r) {
    const T* row = rows.data_ptr<T>() + r * n;
    const T t = kth.data_ptr<T>()[r];
    int64_t above = 0;
    for (int64_t j = 0; j < n; ++j) above += row[j] > t;
    int64_t wanted = k - above;  // ties still needed, >= 1
    for (int64_t j = 0; j < n; ++j) {
      const bool tie = row[j] == t;
      out[r * n + j] = row[j] > t || (tie && wanted > 0);
      wanted -= tie;
    }
  }
  return mask;
}

// lowest_scored_slots on the CPU: the same (score, newest first) keys, one radix select and
// one pass to collect the e slots at or below the e-th key (keys are distinct within a row).
torch::Tensor lowest_scored_slots_cpu(const torch::Tensor& scores_in, const torch::Tensor& positions_in, int64_t e,
                                      bool lowest_first) {
  const torch::Tensor scores = scores_in.to(torch::kFloat32).contiguous();
  const int64_t rows = scores.size(0), n = scores.size(1);
  const torch::Tensor positions = positions_in.to(torch::kInt64).expand({rows, n}).contiguous();
  torch::Tensor out = torch::empty({rows, e}, torch::kInt64);
  if (e == 0) return out;
  std::vector<uint64_t> keys(static_cast<size_t>(n)), scratch(static_cast<size_t>(n));
  std::vector<std::pair<uint64_t, int64_t>> chosen;
  for (int64_t r = 0; r < rows; ++r) {
    const float* score = scores.data_ptr<float>() + r * n;
    const int64_t* position = positions.data_ptr<int64_t>() + r * n;
    for (int64_t j = 0; j < n; ++j)  // ties: the larger position first
      keys[j] = order_key(score[j]) | static_cast<uint64_t>(((int64_t{1} << 31) - 1 - position[j]) & 0xffffffff);
    std::copy(keys.begin(), keys.end(), scratch.begin());
    const uint64_t last = kth_smallest_key(scratch.data(), scratch.size(), static_cast<size_t>(e));
    chosen.clear();
    for (int64_t j = 0; j < n; ++j)
      if (keys[j] <= last) chosen.emplace_back(keys[j], j);
    if (lowest_first) std::sort(chosen.begin(), chosen.end());
    int64_t* row = out.data_ptr<int64_t>() + r * e;
    for (int64_t i = 0; i < e; ++i) row[i] = chosen[i].second;
  }
  return out;
}

}  // namespace

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
  if (scores.device().is_cpu() && positions.device().is_cpu()) return lowest_scored_slots_cpu(scores, positions, e, lowest_first);
  return lowest_scored_slots_by_ops(scores, positions, e, lowest_first);
}

torch::Tensor lowest_scored_slots_by_ops(const torch::Tensor& scores, const torch::Tensor& positions, int64_t e, bool lowest_first) {
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
  if (!scores.device().is_cpu() || k <= 0 || k >= n) return top_k_mask_by_ops(scores, k);
  const torch::Tensor rows = scores.reshape({-1, n});
  // Half types widen exactly to float32.
  const bool wide = rows.scalar_type() == torch::kFloat64;
  const torch::Tensor values = wide ? rows : rows.to(torch::kFloat32);
  const torch::Tensor kth = kth_largest(values, k);
  return (wide ? top_k_mask_cpu<double>(values, kth, k) : top_k_mask_cpu<float>(values, kth, k)).reshape(scores.sizes());
}

torch::Tensor top_k_mask_by_ops(const torch::Tensor& scores, int64_t k) {
  const int64_t n = scores.size(-1);
  if (k <= 0) return torch::zeros(scores.sizes(), scores.options().dtype(torch::kBool));
  if (k >= n) return torch::ones(scores.sizes(), scores.options().dtype(torch::kBool));
  const torch::Tensor rows = scores.reshape({-1, n});
  torch::Tensor kth = kth_largest(rows, k).reshape({-1, 1});
  torch::Tensor above = rows > kth, ties = rows == kth;
  torch::Tensor wanted = k - above.sum(-1, /*keepdim=*/true);  // ties still needed, >= 1
  return above.logical_or(ties.logical_and(ties.cumsum(-1) <= wanted)).reshape(scores.sizes());
}

torch::Tensor valid_first(const torch::Tensor& perm_in, const torch::Tensor& valid_in) {
  const torch::Tensor perm = perm_in.contiguous(), valid = valid_in.expand(perm.sizes()).contiguous();
  if (!perm.device().is_cpu()) return valid_first_by_ops(perm, valid);
  const int64_t rows = perm.size(0), n = perm.size(1);
  torch::Tensor out = torch::empty_like(perm);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* slots = perm.data_ptr<int64_t>() + r * n;
    const bool* ok = valid.data_ptr<bool>() + r * n;
    int64_t* to = out.data_ptr<int64_t>() + r * n;
    int64_t next_valid = 0, next_hole = 0;
    for (int64_t j = 0; j < n; ++j) next_hole += ok[slots[j]];
    for (int64_t j = 0; j < n; ++j) to[ok[slots[j]] ? next_valid++ : next_hole++] = slots[j];
  }
  return out;
}

torch::Tensor valid_first_by_ops(const torch::Tensor& perm, const torch::Tensor& valid) {
  torch::Tensor ok = valid.expand(perm.sizes()).gather(1, perm);  // in arrival order
  torch::Tensor count = ok.to(torch::kInt64);
  torch::Tensor to = torch::where(ok, count.cumsum(1) - 1, count.sum(1, /*keepdim=*/true) + (1 - count).cumsum(1) - 1);
  return torch::empty_like(perm).scatter_(1, to, perm);
}

torch::Tensor first_true_columns(const torch::Tensor& mask, int64_t count) {
  const int64_t rows = mask.size(0), n = mask.size(1);
  const torch::Tensor columns = torch::arange(n, mask.options().dtype(torch::kInt64)).expand({rows, n});
  return valid_first(columns, mask).narrow(1, 0, count).contiguous();
}

torch::Tensor host_tensor_on(const torch::Tensor& host, const torch::Device& device) {
  if (device.is_cpu()) return host;
  if (!device.is_cuda()) return host.to(device, /*non_blocking=*/true);
  torch::Tensor staged = torch::empty(host.sizes(), host.options().pinned_memory(true));
  staged.copy_(host);
  return staged.to(device, /*non_blocking=*/true);
}

torch::Tensor host_slots_on(const std::vector<int64_t>& slots, const torch::Device& device) {
  const auto n = static_cast<int64_t>(slots.size());
  return host_tensor_on(torch::tensor(slots, torch::kInt64).reshape({1, n}), device);
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
