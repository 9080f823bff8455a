#pragma once
// Peak memory of libtorch's CUDA caching allocator: the numbers PyTorch programs report as
// torch.cuda.max_memory_allocated (live tensors) and max_memory_reserved (blocks the allocator
// holds), so `kvbench bench` rows and CUDA jobs' results compare like for like with transformers.
// Builds without libtorch's CUDA library, and CPU devices, have no such counters.
#include <torch/torch.h>

#include <cstdint>
#include <optional>

namespace kvbench::models {

struct DevicePeak {
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
};

// Frees the allocator's cached blocks and restarts its peaks (as torch.cuda.empty_cache() and
// reset_peak_memory_stats() do); a no-op where there are no counters.
void restart_device_peak(const torch::Device& device);

// The peaks since the last restart; nullopt on the CPU or in a build without CUDA.
std::optional<DevicePeak> device_peak(const torch::Device& device);

}  // namespace kvbench::models
