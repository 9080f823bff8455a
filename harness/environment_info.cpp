#include "harness/environment_info.hpp"

#include <sys/utsname.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include "models/cpu_threads.hpp"

namespace kvbench::harness {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

}  // namespace

nlohmann::json version_info() { return {{"kvbench", KVBENCH_VERSION}, {"libtorch", TORCH_VERSION}}; }

std::string host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

nlohmann::json environment_info(const std::string& device) {
  struct utsname u {};
  ::uname(&u);
  nlohmann::json env = {{"host", host_name()},
                        {"cpu", cpu_model()},
                        {"cores", static_cast<int64_t>(std::thread::hardware_concurrency())},
                        {"threads", static_cast<int64_t>(at::get_num_threads())},
                        {"blas_threads", static_cast<int64_t>(models::blas_threads())},
                        {"device", device},
                        {"os", std::string(u.sysname) + " " + u.release}};
  if (device.rfind("cuda", 0) == 0) env["cuda_devices"] = static_cast<int64_t>(torch::cuda::device_count());
  return env;
}

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm {};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace kvbench::harness
