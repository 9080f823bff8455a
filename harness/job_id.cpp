#include "harness/job_id.hpp"

#include "datasets/sha256.hpp"

namespace kvbench::harness {

std::string canonical_json(const nlohmann::json& value) { return value.dump(); }

std::string job_id(const nlohmann::json& spec, const nlohmann::json& checksums) {
  std::string hashed = canonical_json(spec) + "\nmodel " + checksums.at("model").get<std::string>() +
                       "\ndataset " + checksums.at("dataset").get<std::string>() + "\n";
  // A learned press's artefacts (tasks::job_checksums); absent for every other job, whose id stays as it was.
  if (checksums.contains("policy")) hashed += "policy " + checksums.at("policy").get<std::string>() + "\n";
  return datasets::sha256_hex(hashed).substr(0, 16);
}

}  // namespace kvbench::harness
