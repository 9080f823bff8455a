// Result files as `table`, `collect`, `grid` and `check` read them: validity, the canonical spec,
// matching against a table cell, metric extraction (paths, geomean/mean, scale/offset). The
// policy registry comes from the normal build, uninstrumented.
// fuzz-sources: harness/result_file.cpp harness/job_id.cpp harness/results_index.cpp harness/table_spec.cpp harness/output_escaping.cpp harness/plain_name.cpp datasets/json_parse.cpp datasets/regular_file.cpp
// fuzz-prebuilt
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "datasets/json_parse.hpp"
#include "harness/result_file.hpp"
#include "harness/results_index.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kvbench::harness::MetricSpec;
  try {
    const nlohmann::json result =
        kvbench::datasets::parse_json(std::string_view(reinterpret_cast<const char*>(data), size), "result.json");
    if (!kvbench::harness::result_json_problem(result, "").empty()) return 0;
    const nlohmann::json spec = kvbench::harness::canonical_spec(result["spec"]);
    (void)kvbench::harness::job_matches({{"task", "tinystories"}, {"policy", "kvec"}, {"budget", "64"}}, result["spec"]);
    (void)kvbench::harness::job_matches(spec, result["spec"]);
    for (const auto& [key, value] : result["metrics"].items()) {
      MetricSpec metric;
      metric.paths = {key};
      std::string why;
      (void)kvbench::harness::extract_metric(metric, result, &why);
      metric.combine = "geomean";
      metric.paths = {key, key};
      (void)kvbench::harness::extract_metric(metric, result, &why);
    }
    kvbench::harness::ResultsIndex index;
    index.add({"result.json", result});
    (void)index.match(spec, {});
  } catch (const std::invalid_argument&) {
  } catch (const std::runtime_error&) {
  }
  return 0;
}
