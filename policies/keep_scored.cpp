#include "policies/keep_scored.hpp"

#include <limits>
#include <stdexcept>

#include "policies/order_statistic.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies {
namespace {

// Up to this many evictions keep_best names the evicted slots instead of ranking every slot
// (LayerCache::evict moves them pairwise up to the same limit).
constexpr int64_t kFewEvictions = 64;

torch::TensorOptions long_opts(const LayerCache& cache) {
  return torch::TensorOptions().dtype(torch::kInt64).device(cache.keys().device());
}

// A [rows, n] tensor computed over slots in arrival order, put back at the slots: out[perm[j]] = a[j].
torch::Tensor to_slots(const torch::Tensor& by_arrival, const torch::Tensor& perm) {
  torch::Tensor p = perm.expand(by_arrival.sizes());
  return torch::empty(by_arrival.sizes(), by_arrival.options()).scatter_(1, p, by_arrival);
}

// [kv_heads, n] bool in arrival order (oldest first) → the `r` first valid of every row.
torch::Tensor first_valid(const torch::Tensor& valid_in_order, int64_t r) {
  return valid_in_order.logical_and(valid_in_order.to(torch::kInt64).cumsum(1) <= r);
}

// The r newest (or oldest) valid slots of a ragged cache whose slots left arrival order: those at
// or above each row's r-th largest valid position (at or below its r-th smallest). Positions are
// distinct per row: one order statistic, no sort of the arrival order.
torch::Tensor valid_by_position(const LayerCache& cache, int64_t r, bool newest) {
  const torch::Tensor valid = cache.valid();
  const int64_t n = cache.size();
  if (r <= 0) return torch::zeros_like(valid);
  if (r >= n) return valid.clone();
  // Invalid slots rank below (newest) or above (oldest) every position.
  const int64_t outside = newest ? int64_t{-1} : std::numeric_limits<int64_t>::max();
  torch::Tensor pos = cache.positions().masked_fill(valid.logical_not(), outside);
  torch::Tensor kth = kth_largest(pos, newest ? r : n - r + 1);
  return valid.logical_and(newest ? pos >= kth : pos <= kth);
}

}  // namespace

torch::Tensor valid_counts(const LayerCache& cache) { return cache.head_lengths().to(torch::kCPU, torch::kInt64); }

bool fits_budget(const LayerCache& cache, int64_t budget) {
  if (cache.size() <= budget) return true;
  return cache.max_head_length() <= budget;
}

torch::Tensor newest_valid(const LayerCache& cache, int64_t r) {
  const int64_t n = cache.size(), kvh = cache.kv_heads();
  if (cache.in_arrival_order()) {
    if (cache.all_valid()) return (torch::arange(n, long_opts(cache)) >= n - r).unsqueeze(0).expand({kvh, n});
    return first_valid(cache.valid().flip(1), r).flip(1);
  }
  if (!cache.all_valid()) return valid_by_position(cache, r, /*newest=*/true);
  torch::Tensor perm = cache.arrival_order().flip(1).expand({kvh, n});  // newest first
  return to_slots((torch::arange(n, long_opts(cache)) < r).unsqueeze(0).expand({kvh, n}), perm);
}

torch::Tensor oldest_valid(const LayerCache& cache, int64_t s) {
  const int64_t n = cache.size(), kvh = cache.kv_heads();
  if (cache.in_arrival_order()) {
    if (cache.all_valid()) return (torch::arange(n, long_opts(cache)) < s).unsqueeze(0).expand({kvh, n});
    return first_valid(cache.valid(), s);
  }
  if (!cache.all_valid()) return valid_by_position(cache, s, /*newest=*/false);
  torch::Tensor perm = cache.arrival_order().expand({kvh, n});
  return to_slots((torch::arange(n, long_opts(cache)) < s).unsqueeze(0).expand({kvh, n}), perm);
}

void keep_best(LayerCache& cache, const torch::Tensor& scores_in, int64_t budget, const torch::Tensor& protect) {
  if (budget < 1) throw std::invalid_argument("keep_best: budget must be at least 1");
  if (fits_budget(cache, budget)) return;
  const int64_t n = cache.size(), kvh = cache.kv_heads();
  const float inf = std::numeric_limits<float>::infinity();
  const auto device = cache.keys().device();
  // Everything stays on the cache's device: nothing is read back to the host.
  torch::Tensor scores = scores_in.to(device, torch::kFloat32);
  if (scores.dim() != 2 || scores.size(1) != n || (scores.size(0) != 1 && scores.size(0) != kvh))
    throw std::invalid_argument("keep_best: scores must be [kv_heads, size] or [1, size]");
  // One arrival order for every head (arrival_order() is then one row).
  const bool one_order = cache.in_arrival_order() || cache.homogeneous();
  bool shared = scores.size(0) == 1 && cache.all_valid() && one_order;
  if (shared && protect.defined() && protect.size(0) != 1) {
    // On the CPU check that every head protects the same slots; on a device that is implied by a
    // homogeneous cache (the protections come from positions, equal on every head).
    shared = protect.device().is_cpu() ? protect.eq(protect[0]).all().item<bool>() : cache.homogeneous();
  }
  if (protect.defined()) {
    torch::Tensor p = protect.to(device);
    if (shared) p = p.narrow(0, 0, 1);
    // Protected slots rank above every score; among themselves, by score, then by arrival.
    scores = scores.expand({p.size(0), n}).masked_fill(p, inf);
  }
  if (!shared) scores = scores.expand({kvh, n}).contiguous();
  if (!cache.all_valid()) scores = scores.masked_fill(cache.valid().logical_not(), -inf);
  const int64_t evicting = n - budget;
  if (cache.slot_order() == SlotOrder::kAny && cache.all_valid() && evicting <= kFewEvictions &&
      (scores.size(0) == kvh || cache.homogeneous())) {
    // A decode step: name the few evicted slots (O(n), no sort, no arrival order) and let the
    // cache fill their holes with O(evicted) moves.
    torch::Tensor positions = scores.size(0) == 1 ? cache.positions().narrow(0, 0, 1) : cache.positions();
    cache.evict(lowest_scored_slots(scores, positions, evicting));
    return;
  }
  if (cache.in_arrival_order()) {
    cache.keep(top_k_slots(scores, budget));
    return;
  }
  // Rank in arrival order, so ties still go to the older token, then map back to slots.
  torch::Tensor perm = cache.arrival_order().expand({scores.size(0), n});
  cache.keep(perm.gather(1, top_k_slots(scores.gather(1, perm), budget)));
}

torch::Tensor pool_scores(const torch::Tensor& scores, const std::string& pooling, int64_t kernel) {
  if (pooling == "none" || kernel <= 1) return scores;
  if (kernel % 2 == 0) throw std::invalid_argument("pooling kernel must be odd, got " + std::to_string(kernel));
  torch::Tensor in = scores.unsqueeze(1);  // [rows, 1, n]
  torch::Tensor out;
  if (pooling == "max") out = torch::max_pool1d(in, kernel, 1, kernel / 2);
  else if (pooling == "avg") out = torch::avg_pool1d(in, kernel, 1, kernel / 2, /*ceil_mode=*/false, /*count_include_pad=*/true);
  else throw std::invalid_argument("pooling must be max, avg or none, got '" + pooling + "'");
  return out.squeeze(1);
}

}  // namespace kvbench::policies
