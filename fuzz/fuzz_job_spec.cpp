// Job specs: the JSON file, then normalize_job_spec (field names and types, task and policy
// names, policy parameters and their ranges, budget, protocol, device, dtype) and the one-line
// description. The task/policy registries come from the normal build, uninstrumented.
// fuzz-sources: harness/job_spec.cpp harness/job_id.cpp harness/atomic_file.cpp datasets/json_parse.cpp datasets/regular_file.cpp
// fuzz-prebuilt
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "datasets/json_parse.hpp"
#include "harness/job_spec.hpp"
#include "tasks/run_task.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const nlohmann::json raw =
        kvbench::datasets::parse_json(std::string_view(reinterpret_cast<const char*>(data), size), "job.json");
    (void)kvbench::harness::short_description(raw.is_object() ? raw : nlohmann::json::object());
    const nlohmann::json spec = kvbench::tasks::normalize_job_spec(raw);
    if (kvbench::tasks::normalize_job_spec(spec) != spec) __builtin_trap();  // canonical is a fixed point
    (void)kvbench::harness::short_description(spec);
  } catch (const std::invalid_argument&) {
  } catch (const std::runtime_error&) {  // DataError, ModelLoadError
  }
  return 0;
}
