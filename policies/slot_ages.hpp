#pragma once
// The slots of a homogeneous SlotOrder::kAny cache in arrival order, kept on the host by a policy
// that makes every eviction of that cache itself (Local, StreamingLLM). Naming the oldest slots
// then costs O(evicted) host work instead of a pass over every slot's position, so a decode step
// costs the same at 1K and at 64K tokens. The mirror follows LayerCache's hole-filling rule: the
// i-th smallest evicted slot below the new size receives the i-th smallest surviving slot above it.
#include <cstdint>
#include <deque>
#include <vector>

#include "policies/layer_cache.hpp"

namespace kvbench::policies {

class SlotAges {
 public:
  // Evicts the tokens of arrival rank skip .. skip + count − 1 (0 = oldest) from `cache`, which
  // must be homogeneous, all valid and kAny. Slots appended since the last call are taken as the
  // newest; a mirror that cannot be brought up to date that way is rebuilt from the positions.
  void evict(LayerCache& cache, int64_t skip, int64_t count);
  // Slots oldest first, as the mirror holds them (for tests).
  const std::deque<int64_t>& slots() const { return slots_; }

 private:
  void sync(const LayerCache& cache);
  std::deque<int64_t> slots_;
};

}  // namespace kvbench::policies
