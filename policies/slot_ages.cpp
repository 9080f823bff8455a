#include "policies/slot_ages.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "policies/selection.hpp"

namespace kvbench::policies {

void SlotAges::sync(const LayerCache& cache) {
  const auto n = static_cast<size_t>(cache.size());
  if (cache.in_arrival_order()) {  // until the first move the order is the slot order
    slots_.resize(n);
    std::iota(slots_.begin(), slots_.end(), int64_t{0});
    return;
  }
  if (!slots_.empty() && slots_.size() <= n) {  // the runtime appended after our last eviction
    for (size_t slot = slots_.size(); slot < n; ++slot) slots_.push_back(static_cast<int64_t>(slot));
    return;
  }
  torch::Tensor order = cache.arrival_order().to(torch::kCPU).contiguous();  // once: a cache we did not follow
  slots_.assign(order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + order.numel());
}

void SlotAges::evict(LayerCache& cache, int64_t skip, int64_t count) {
  if (!cache.all_valid() || !cache.homogeneous() || cache.slot_order() != SlotOrder::kAny)
    throw std::logic_error("SlotAges: needs a homogeneous kAny cache with every slot valid");
  if (count <= 0) return;
  sync(cache);
  const int64_t n = cache.size(), m = n - count;
  if (skip < 0 || m < skip) throw std::out_of_range("SlotAges: evicting past the newest token");
  std::vector<int64_t> victims(slots_.begin() + skip, slots_.begin() + skip + count);
  slots_.erase(slots_.begin() + skip, slots_.begin() + skip + count);
  cache.evict(host_slots_on(victims, cache.keys().device()));
  // The moves the cache made: holes (victims below m) ← survivors at or above m, both ascending.
  std::vector<int64_t> holes, movers;
  std::sort(victims.begin(), victims.end());
  for (int64_t v : victims)
    if (v < m) holes.push_back(v);
  for (int64_t slot = m, i = 0; slot < n; ++slot) {
    while (i < count && victims[i] < slot) ++i;
    if (i < count && victims[i] == slot) continue;
    movers.push_back(slot);
  }
  for (size_t k = 0; k < holes.size(); ++k) {
    auto it = std::find(slots_.rbegin(), slots_.rend(), movers[k]);  // movers are the newest: near the back
    if (it == slots_.rend()) throw std::logic_error("SlotAges: the mirror lost track of slot " + std::to_string(movers[k]));
    *it = holes[k];
  }
}

}  // namespace kvbench::policies
