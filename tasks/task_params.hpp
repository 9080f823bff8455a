#pragma once
// The parameters a task accepts in `task_params`, declared by each task (Task::parameters) and
// checked in one place when a job spec is normalised — before its id is computed — so a typo
// (`max_tokns`) or a nonsense value (`max_new_tokens: -1`, `4.5`) fails every command (`run`,
// `grid`, `table`) with the list of valid names instead of being silently ignored.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kvbench::tasks {

struct ParamSpec {
  enum class Kind { Bool, Integer, Number, String, StringList, IntegerList, NumberList, Object };
  std::string name;
  Kind kind = Kind::String;
  std::optional<double> min;         // Integer/Number and the elements of the lists
  std::optional<double> max;
  std::vector<std::string> choices;  // String: the allowed values (empty: any)

  static ParamSpec make(std::string name, Kind kind, std::optional<double> min = std::nullopt,
                        std::optional<double> max = std::nullopt, std::vector<std::string> choices = {}) {
    ParamSpec s;
    s.name = std::move(name);
    s.kind = kind;
    s.min = min;
    s.max = max;
    s.choices = std::move(choices);
    return s;
  }
  static ParamSpec flag(std::string name) { return make(std::move(name), Kind::Bool); }
  static ParamSpec integer(std::string name, std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
    return make(std::move(name), Kind::Integer, min, max);
  }
  static ParamSpec number(std::string name, std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
    return make(std::move(name), Kind::Number, min, max);
  }
  static ParamSpec text(std::string name) { return make(std::move(name), Kind::String); }
  static ParamSpec choice(std::string name, std::vector<std::string> choices) {
    return make(std::move(name), Kind::String, std::nullopt, std::nullopt, std::move(choices));
  }
  static ParamSpec texts(std::string name) { return make(std::move(name), Kind::StringList); }
  static ParamSpec integers(std::string name, std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
    return make(std::move(name), Kind::IntegerList, min, max);
  }
  static ParamSpec numbers(std::string name, std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
    return make(std::move(name), Kind::NumberList, min, max);
  }
  static ParamSpec object(std::string name) { return make(std::move(name), Kind::Object); }
  // What the value must be, for messages: "an integer >= 1", "one of skip, middle".
  std::string expected() const;
};

using ParamSpecs = std::vector<ParamSpec>;

// Throws std::invalid_argument "task_params: field 'x' is not a parameter of task 't' (valid: ...)"
// or "task_params: field 'x' of task 't' must be <expected>, got <value>" (the "field 'x'" wording
// lets the spec readers point at the line).
void check_task_params(const std::string& task, const ParamSpecs& specs, const nlohmann::json& params);

}  // namespace kvbench::tasks
