#pragma once
// A Chrome trace of the libtorch operators run while an OpTrace lives (torch's legacy profiler,
// RecordProfile; each RECORD_FUNCTION scope is an event too): `kvbench bench --trace` and
// KVBENCH_TRACE for bench_policies, summed per operator by scripts/trace_ops.py. A libtorch
// without that profiler (CMake checks at configure time) refuses to start one, with one error.
#include <memory>
#include <string>

namespace kvbench::models {

class OpTrace {
 public:
  static bool available();
  explicit OpTrace(const std::string& path);  // throws std::runtime_error where !available()
  ~OpTrace();                                 // writes the trace
  OpTrace(const OpTrace&) = delete;
  OpTrace& operator=(const OpTrace&) = delete;

 private:
  struct Recorder;
  std::unique_ptr<Recorder> recorder_;
};

}  // namespace kvbench::models
