#pragma once
// The policies whose decode steps never make the host wait for the device: they decide with
// tensor ops on the cache's device (docs/performance.md). Checked on the CPU by the meta-device
// stand-in (meta_device_test.cpp) and on a GPU by Cuda.DecodeStepsNeverSynchronise.
#include <string>
#include <vector>

namespace kvbench::testing {

inline const std::vector<std::string>& device_resident_policies() {
  static const std::vector<std::string> names{"full", "local", "streaming_llm", "random", "h2o", "tova",
                                              "scissorhands", "snapkv", "pyramidkv", "roco", "buzz", "cascade"};
  return names;
}

// The others read the device in a decode step, and why (docs/performance.md): Ada-KV's ragged
// eviction sizes the cache by its longest head; K-VEC loops over its least-focused heads and sizes
// its coverage counters on the host; BumbleBee's online summary compares scores there as tokens
// join.
inline const std::vector<std::string>& host_deciding_policies() {
  static const std::vector<std::string> names{"adakv", "kvec", "bumblebee"};
  return names;
}

}  // namespace kvbench::testing
