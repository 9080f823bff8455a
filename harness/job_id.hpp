#pragma once
// A job's identity: sha256 over its canonical spec and the checksums of the model and dataset it
// reads (and of a learned press's artefacts), first 16 hex digits (64 bits: a collision among a
// study's few thousand jobs has probability ~1e-12). The same spec on other weights, data or
// artefacts is another job.
#include <nlohmann/json.hpp>

#include <string>

namespace kvbench::harness {

// Canonical JSON: keys sorted (nlohmann's object is an ordered map), no whitespace, numbers in
// their shortest round-trip form. The exact bytes that are hashed.
std::string canonical_json(const nlohmann::json& value);

// `spec` must already be normalised (tasks::normalize_job_spec); `checksums` is
// {"model": sha256, "dataset": sha256[, "policy": sha256]} (tasks::job_checksums).
std::string job_id(const nlohmann::json& spec, const nlohmann::json& checksums);

}  // namespace kvbench::harness
