#pragma once
// One declaration of a parameter — name, type, default, range or choices, one line of help —
// shared by policies (policy_params) and tasks (task_params). From it come validation (unknown
// keys and bad values are errors), the defaults a policy's job id hashes, `kvbench policies` /
// `kvbench tasks` (text and --json), and the parameter tables in docs/ (base/param_listing.hpp).
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kvbench::params {

enum class Type { kBool, kInteger, kNumber, kString, kStringList, kIntegerList, kNumberList, kObject };

struct Param {
  std::string name;
  Type type = Type::kString;
  // The value used when the parameter is not given; null when it is computed (the help says how)
  // or, with `nullable`, when null itself is the default ("auto").
  nlohmann::json default_value;
  std::string help;
  std::optional<double> min, max;    // kInteger / kNumber and the elements of their lists
  std::vector<std::string> choices;  // kString: the allowed values (empty: any string)
  bool nullable = false;             // null is a valid value (the default "auto" of BUZZ's window)
  // kString: a file or folder the user gives (a learned press's published artefact); what it holds
  // joins the job's id (tasks::job_checksums), as the model's weights do.
  bool names_file = false;

  // Builders: the declaration reads as one line per parameter.
  static Param flag(std::string name, nlohmann::json default_value, std::string help);
  static Param integer(std::string name, nlohmann::json default_value, std::string help,
                       std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt);
  static Param number(std::string name, nlohmann::json default_value, std::string help,
                      std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt);
  static Param text(std::string name, nlohmann::json default_value, std::string help);
  static Param file(std::string name, std::string help);  // names_file, default "" (none given)
  static Param choice(std::string name, nlohmann::json default_value, std::vector<std::string> choices,
                      std::string help);
  static Param texts(std::string name, nlohmann::json default_value, std::string help);
  static Param integers(std::string name, nlohmann::json default_value, std::string help,
                        std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt);
  static Param numbers(std::string name, nlohmann::json default_value, std::string help,
                       std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt);
  static Param object(std::string name, nlohmann::json default_value, std::string help);
  // The same declaration with null accepted as a value.
  Param or_null() const;

  // What a value must be, for messages: "an integer >= 1", "one of max, avg".
  std::string expected() const;
  // "bool", "integer", "number", "string", "list of strings", ...
  std::string type_name() const;
  bool accepts(const nlohmann::json& value) const;
};

using Params = std::vector<Param>;

// Whose parameters these are, for messages: "policy 'snapkv'", "task 'needle'"; `field` is how a
// job spec names the object ("policy_params", "task_params").
struct Owner {
  std::string name;
  std::string field;
};

// Throws std::invalid_argument "<field>: field 'x' is not a parameter of <owner> (valid: ...)" or
// "<field>: field 'x' of <owner> must be <expected>, got <value>" (the "field 'x'" wording lets
// the spec readers point at the line). `given` must be an object (or null: nothing given).
void check(const Owner& owner, const Params& params, const nlohmann::json& given);

// `given` checked, then every declared default that has a value filled in.
nlohmann::json with_defaults(const Owner& owner, const Params& params, const nlohmann::json& given);

// The declaration of `name`; throws std::logic_error when there is none (a programming error).
const Param& find(const Params& params, const std::string& name);

// A declared list with a repeated name is a programming error: throws std::logic_error.
void check_unique_names(const std::string& owner, const Params& params);

}  // namespace kvbench::params
