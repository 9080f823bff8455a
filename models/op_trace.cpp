#include "models/op_trace.hpp"

#include <stdexcept>

// KVBENCH_LEGACY_PROFILER: CMake compiled and linked a RecordProfile against this libtorch.
#ifdef KVBENCH_LEGACY_PROFILER
#include <torch/csrc/autograd/profiler_legacy.h>
#endif

namespace kvbench::models {

#ifdef KVBENCH_LEGACY_PROFILER
struct OpTrace::Recorder {
  explicit Recorder(const std::string& path) : profile(path) {}
  torch::autograd::profiler::RecordProfile profile;
};
bool OpTrace::available() { return true; }
#else
struct OpTrace::Recorder {};
bool OpTrace::available() { return false; }
#endif

OpTrace::OpTrace(const std::string& path) {
#ifdef KVBENCH_LEGACY_PROFILER
  recorder_ = std::make_unique<Recorder>(path);
#else
  throw std::runtime_error(path + ": no operator trace in this build (its libtorch has no legacy profiler, "
                           "torch::autograd::profiler::RecordProfile)");
#endif
}

OpTrace::~OpTrace() = default;

}  // namespace kvbench::models
