#include "policies/buzz_sampling.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kvbench::policies::buzz {

std::vector<Run> single_slots(int64_t begin, int64_t count) {
  std::vector<Run> runs;
  for (int64_t j = begin; j < begin + count; ++j) runs.push_back({j, 1});
  return runs;
}

std::vector<Run> local_max_segments(int64_t begin, int64_t count, int64_t stride) {
  std::vector<Run> runs;
  for (int64_t b = begin; b < begin + count; b += stride) runs.push_back({b, std::min(stride, begin + count - b)});
  return runs;
}

int64_t old_stride_for(int64_t stride) { return (stride + 1) / 2; }

double threshold_ratio(int64_t stride) {
  const double s = static_cast<double>(stride);
  return stride % 2 == 1 ? (s * s + 1) / (s + 1) : s - 1;
}

Layout resolve_layout(int64_t budget, int64_t sinks, int64_t window, int64_t threshold, int64_t stride) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("buzz: " + why + " (budget " + std::to_string(budget) + ", sinks " +
                                std::to_string(sinks) + ", window " + std::to_string(window) + ", threshold " +
                                std::to_string(threshold) + ")");
  };
  Layout layout;
  layout.sinks = std::clamp<int64_t>(budget - kMinThreshold, 0, sinks);
  const int64_t room = budget - layout.sinks;
  if (window < 0 && threshold < 0) {
    const double ratio = threshold_ratio(stride);
    layout.window = static_cast<int64_t>(std::llround(static_cast<double>(room) / (1.0 + ratio)));
    layout.threshold = room - layout.window;
    if (layout.threshold < kMinThreshold) {
      layout.threshold = std::min(kMinThreshold, room);
      layout.window = room - layout.threshold;
    }
  } else if (window >= 0 && threshold < 0) {
    layout.window = window;
    layout.threshold = room - window;
  } else if (window < 0) {
    layout.threshold = threshold;
    layout.window = room - threshold;
  } else {
    layout.window = window;
    layout.threshold = threshold;
  }
  if (layout.window < 0) fail("the threshold leaves no room for the window in the budget");
  if (layout.threshold < std::min(kMinThreshold, room)) fail("the threshold must be at least 3 and fit in the budget");
  if (layout.sinks + layout.window + layout.threshold > budget) fail("sinks + window + threshold exceed the budget");
  return layout;
}

}  // namespace kvbench::policies::buzz
