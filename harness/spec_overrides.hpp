#pragma once
// Per-spec job-field overrides, one file that `kvbench table`, `figure` and `report` all read
// (`--spec-overrides FILE`), so a report looks up the same jobs as the tables it gathers
// (results/regeneration.json: the limits that fit the papers' tables to stories260K). The file:
//   {"about": "...", "specs": {"<spec id>": {"set": {job fields}, "why": "..."}, ...}}
// Every spec the command reads needs an entry (`{"set": {}}` for none): a spec missing from the
// file would silently run at another configuration than its neighbours.
#include <nlohmann/json.hpp>

#include <string>

namespace kvbench::harness {

class SpecOverrides {
 public:
  SpecOverrides() = default;  // no file: only the command line's overrides
  // Throws std::invalid_argument naming the file and field for unknown keys or bad job fields.
  static SpecOverrides load(const std::string& path);

  // The job fields for `spec_id`: the file's entry, then `command_line` (--model, --set) on top.
  // Throws when a file was given and has no entry for the spec.
  nlohmann::json for_spec(const std::string& spec_id, const nlohmann::json& command_line) const;

 private:
  std::string path_;
  nlohmann::json specs_ = nlohmann::json::object();
};

}  // namespace kvbench::harness
