#pragma once
// --device and --dtype checked before libtorch sees them: libtorch's own errors for "tpu" or a
// CPU float16 matmul are multi-line messages with C++ stack frames.
#include <torch/torch.h>

#include <string>

namespace kvbench::models {

// "cpu", "cuda" or "cuda:N"; throws std::invalid_argument naming the accepted values.
torch::Device parse_device(const std::string& name);

// "auto" (float32 on CPU, bfloat16 on CUDA), "float32", "bfloat16", "float16" (CUDA only).
torch::ScalarType parse_dtype(const std::string& name, const torch::Device& device);

// Both checks without a CUDA device present (for validating job specs up front).
void validate_device_and_dtype(const std::string& device, const std::string& dtype);

}  // namespace kvbench::models
