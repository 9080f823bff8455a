#pragma once
// A job = one cell of a results table: its canonical spec, the checksums of what it reads, its id.
#include <nlohmann/json.hpp>

#include <string>

namespace kvbench::harness {

struct Job {
  nlohmann::json spec;       // canonical: every field present (tasks::normalize_job_spec)
  nlohmann::json checksums;  // {"model", "dataset"}
  std::string id;            // harness/job_id.hpp
};

// Normalises `raw` (unknown fields, bad types and bad values throw std::invalid_argument),
// computes the checksums and the id.
Job make_job(const nlohmann::json& raw);

// Parses a JSON file; errors name the file, line and column ("grid.json:3:14: ...").
nlohmann::json read_json_file(const std::string& path);

// Reads and normalises a job spec file; an invalid field is reported with the file and the line
// where that field appears.
Job load_job_file(const std::string& path);

// Rethrows `error` (a message naming "field 'x'", possibly already prefixed "<path>: ") as
// "<path>:<line>: <message>", the line being where "x" first appears in `text` at or after
// offset `from` (the start of one element when the file holds several specs).
[[noreturn]] void rethrow_with_location(const std::exception& error, const std::string& path, const std::string& text,
                                        size_t from = 0);

// One line for listings and progress: "tinystories kvec{k=2} @64 stream seed=0 limit=3".
// Policy parameters are shown only where they differ from the policy's defaults.
std::string short_description(const nlohmann::json& spec);

}  // namespace kvbench::harness
