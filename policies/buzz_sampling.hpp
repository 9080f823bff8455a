#pragma once
// The two samplers of BUZZ (buzz.txt §3.3) and its parameter estimation (Theorem 3.1), kept free
// of tensors so that the algorithm's steps can be read (and tested) on their own.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvbench::policies::buzz {

// A kept token, as the slots it is chosen from: the best-scored of [begin, begin + length) (ties:
// the earlier slot). One slot for sinks, window and tokens sampled by interval; a segment of new
// tokens for a local maximum (Alg. 2). Every decision of Alg. 1 depends on sizes only, so the
// host plans runs and the scores are read once, on the device, to pick each run's slot.
struct Run {
  int64_t begin = 0;
  int64_t length = 1;
};

// The slots [begin, begin + count), one run each.
std::vector<Run> single_slots(int64_t begin, int64_t count);

// Alg. 1 line 15 for old tokens: every `stride`-th item, starting with the first (0, ŝ, 2ŝ, …).
template <class Item>
std::vector<Item> interval_sample(const std::vector<Item>& items, int64_t stride) {
  std::vector<Item> kept;
  for (std::size_t i = 0; i < items.size(); i += static_cast<std::size_t>(stride)) kept.push_back(items[i]);
  return kept;
}

// Alg. 2: the slots [begin, begin + count) cut into consecutive segments of `stride` (the last may
// be shorter); each segment keeps its local maximum.
std::vector<Run> local_max_segments(int64_t begin, int64_t count, int64_t stride);

// ŝ = ⌊(s + 1)/2⌋, the stride for old tokens (§3.3, Alg. 1 line 13).
int64_t old_stride_for(int64_t stride);

// Theorem 3.1 (eq. 6 in the main text): T/w = (s² + 1)/(s + 1) for odd s, s − 1 for even s.
// (Appendix D.1 states the two cases the other way round; the main text's version is the one its
// worked example uses: s = 5 gives 4.33.)
double threshold_ratio(int64_t stride);

// How a budget maps onto BUZZ's container (Remark 2: the cache never holds more than
// k + w + T tokens, T being the capacity of the region between sinks and window, old + new).
struct Layout {
  int64_t sinks = 0;      // k
  int64_t window = 0;     // w
  int64_t threshold = 0;  // T; eviction runs when old + new tokens reach it
};
// `window` / `threshold` < 0 mean "auto". Both auto: k + w + T = budget with T/w from
// Theorem 3.1. One given: the other fills the budget. Both given: they must fit in it.
// Sinks shrink (never below 0) when the budget cannot hold them and a threshold of 3.
Layout resolve_layout(int64_t budget, int64_t sinks, int64_t window, int64_t threshold, int64_t stride);

// The smallest threshold for which one eviction always shrinks the region (strides ≥ 2).
constexpr int64_t kMinThreshold = 3;

}  // namespace kvbench::policies::buzz
