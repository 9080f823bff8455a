#include "models/device_memory.hpp"

// KVBENCH_C10_CUDA: CMake found libtorch's c10_cuda (a CUDA build of PyTorch), so the
// allocator's counters can be linked. Both 1.13 and 2.x take an int-convertible device index.
#ifdef KVBENCH_C10_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace kvbench::models {

#ifdef KVBENCH_C10_CUDA
namespace {

// Waits for the device's queued work, so the counters include it; returns its index.
int synchronised_index(const torch::Device& device) {
  const int index = device.has_index() ? device.index() : c10::cuda::current_device();
  torch::cuda::synchronize(index);
  return index;
}

}  // namespace
#endif

void restart_device_peak(const torch::Device& device) {
#ifdef KVBENCH_C10_CUDA
  if (!device.is_cuda()) return;
  const int index = synchronised_index(device);
  c10::cuda::CUDACachingAllocator::emptyCache();
  c10::cuda::CUDACachingAllocator::resetPeakStats(index);
#else
  (void)device;
#endif
}

std::optional<DevicePeak> device_peak(const torch::Device& device) {
#ifdef KVBENCH_C10_CUDA
  if (!device.is_cuda()) return std::nullopt;
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(synchronised_index(device));
  constexpr size_t kAllPools = 0;  // StatType::AGGREGATE: the small and large pools together
  return DevicePeak{stats.allocated_bytes[kAllPools].peak, stats.reserved_bytes[kAllPools].peak};
#else
  (void)device;
  return std::nullopt;
#endif
}

}  // namespace kvbench::models
