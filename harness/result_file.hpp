#pragma once
// What makes a JSON document a kvbench result file (harness/job_runner.cpp writes them).
#include <nlohmann/json.hpp>

#include <string>

namespace kvbench::harness {

// Why `result` is not a kvbench result of job `id` ("" when it is one): not an object, "id" not
// a string equal to `id` (any id when `id` is ""), "spec" or "metrics" not objects, "examples"
// present but not a list.
std::string result_json_problem(const nlohmann::json& result, const std::string& id);

// The same for the file at `path`: "no result file" when it does not exist, the parse error
// (truncated, invalid JSON, not a regular file) or the problem above; "" for a valid result.
// ResultsStore::has_result is `result_file_problem(result_path(id), id).empty()`: a truncated
// or foreign file at <id>.json does not count as done, so the job runs again and replaces it.
std::string result_file_problem(const std::string& path, const std::string& id);

// The job a valid result belongs to, for counting each job once: the id its spec and checksums
// hash to (harness/job_id.hpp), so a copy whose "id" was edited is still the same job; its "id"
// when it has no checksums.
std::string result_job_key(const nlohmann::json& result);

}  // namespace kvbench::harness
