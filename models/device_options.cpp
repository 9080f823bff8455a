#include "models/device_options.hpp"

#include <stdexcept>

namespace kvbench::models {

torch::Device parse_device(const std::string& name) {
  const std::string expected = "device must be cpu, cuda or cuda:N, got '" + name + "'";
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name == "cuda") return torch::Device(torch::kCUDA);
  if (name.rfind("cuda:", 0) == 0) {
    const std::string index = name.substr(5);
    if (index.empty() || index.size() > 3 || index.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument(expected);
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(std::stoi(index)));
  }
  throw std::invalid_argument(expected);
}

torch::ScalarType parse_dtype(const std::string& name, const torch::Device& device) {
  if (name == "auto") return device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
  if (name == "float32") return torch::kFloat32;
  if (name == "bfloat16") return torch::kBFloat16;
  if (name == "float16") {
    // libtorch's CPU kernels have no float16 matmul ("addmm_impl_cpu_ not implemented for 'Half'").
    if (!device.is_cuda()) throw std::invalid_argument("dtype float16 runs on CUDA only; on the CPU use float32 or bfloat16");
    return torch::kFloat16;
  }
  throw std::invalid_argument("dtype must be auto, float32, bfloat16 or float16, got '" + name + "'");
}

void validate_device_and_dtype(const std::string& device, const std::string& dtype) {
  parse_dtype(dtype, parse_device(device));
}

}  // namespace kvbench::models
