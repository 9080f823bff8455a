#include "tasks/task_params.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace kvbench::tasks {
namespace {

std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string range_text(const ParamSpec& s) {
  std::string out;
  if (s.min) out += " >= " + number_text(*s.min);
  if (s.min && s.max) out += " and";
  if (s.max) out += " <= " + number_text(*s.max);
  return out;
}

bool in_range(const ParamSpec& s, double v) { return (!s.min || v >= *s.min) && (!s.max || v <= *s.max); }

bool valid_integer(const ParamSpec& s, const nlohmann::json& v) {
  return v.is_number_integer() && in_range(s, v.get<double>());
}

bool valid_number(const ParamSpec& s, const nlohmann::json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && in_range(s, v.get<double>());
}

bool valid(const ParamSpec& s, const nlohmann::json& v) {
  using K = ParamSpec::Kind;
  auto all = [&](bool (*ok)(const ParamSpec&, const nlohmann::json&)) {
    return v.is_array() && std::all_of(v.begin(), v.end(), [&](const nlohmann::json& e) { return ok(s, e); });
  };
  switch (s.kind) {
    case K::Bool: return v.is_boolean();
    case K::Integer: return valid_integer(s, v);
    case K::Number: return valid_number(s, v);
    case K::String:
      return v.is_string() &&
             (s.choices.empty() || std::find(s.choices.begin(), s.choices.end(), v.get<std::string>()) != s.choices.end());
    case K::StringList: return all([](const ParamSpec&, const nlohmann::json& e) { return e.is_string(); });
    case K::IntegerList: return all(valid_integer);
    case K::NumberList: return all(valid_number);
    case K::Object: return v.is_object();
  }
  return false;
}

}  // namespace

std::string ParamSpec::expected() const {
  using K = Kind;
  switch (kind) {
    case K::Bool: return "true or false";
    case K::Integer: return "an integer" + range_text(*this);
    case K::Number: return "a number" + range_text(*this);
    case K::String: {
      if (choices.empty()) return "a string";
      std::string list;
      for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
      return "one of " + list;
    }
    case K::StringList: return "a list of strings";
    case K::IntegerList: return "a list of integers" + range_text(*this);
    case K::NumberList: return "a list of numbers" + range_text(*this);
    case K::Object: return "an object";
  }
  return "?";
}

void check_task_params(const std::string& task, const ParamSpecs& specs, const nlohmann::json& params) {
  if (!params.is_object()) throw std::invalid_argument("job spec: field 'task_params' must be an object");
  for (auto it = params.begin(); it != params.end(); ++it) {
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == it.key(); });
    if (spec == specs.end()) {
      std::vector<std::string> names;
      for (const auto& s : specs) names.push_back(s.name);
      std::sort(names.begin(), names.end());
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw std::invalid_argument("task_params: field '" + it.key() + "' is not a parameter of task '" + task +
                                  "' (valid: " + (list.empty() ? "none" : list) + ")");
    }
    if (!valid(*spec, it.value()))
      throw std::invalid_argument("task_params: field '" + it.key() + "' of task '" + task + "' must be " +
                                  spec->expected() + ", got " + it.value().dump());
  }
}

}  // namespace kvbench::tasks
