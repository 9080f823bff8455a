#include "base/param.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kvbench::params {
namespace {

Param make(std::string name, Type type, nlohmann::json default_value, std::string help, std::optional<double> min = {},
           std::optional<double> max = {}, std::vector<std::string> choices = {}) {
  Param p;
  p.name = std::move(name);
  p.type = type;
  p.default_value = std::move(default_value);
  p.help = std::move(help);
  p.min = min;
  p.max = max;
  p.choices = std::move(choices);
  if (!p.default_value.is_null() && !p.accepts(p.default_value))
    throw std::logic_error("parameter '" + p.name + "': its default " + p.default_value.dump() + " is not " +
                           p.expected());
  return p;
}

std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string range_text(const Param& p) {
  std::string out;
  if (p.min) out += " >= " + number_text(*p.min);
  if (p.min && p.max) out += " and";
  if (p.max) out += " <= " + number_text(*p.max);
  return out;
}

bool in_range(const Param& p, double v) { return (!p.min || v >= *p.min) && (!p.max || v <= *p.max); }

bool valid_integer(const Param& p, const nlohmann::json& v) {
  return v.is_number_integer() && in_range(p, v.get<double>());
}

bool valid_number(const Param& p, const nlohmann::json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && in_range(p, v.get<double>());
}

}  // namespace

Param Param::flag(std::string name, nlohmann::json default_value, std::string help) {
  return make(std::move(name), Type::kBool, default_value, std::move(help));
}
Param Param::integer(std::string name, nlohmann::json default_value, std::string help, std::optional<double> min,
                     std::optional<double> max) {
  return make(std::move(name), Type::kInteger, std::move(default_value), std::move(help), min, max);
}
Param Param::number(std::string name, nlohmann::json default_value, std::string help, std::optional<double> min,
                    std::optional<double> max) {
  return make(std::move(name), Type::kNumber, std::move(default_value), std::move(help), min, max);
}
Param Param::text(std::string name, nlohmann::json default_value, std::string help) {
  return make(std::move(name), Type::kString, std::move(default_value), std::move(help));
}
Param Param::file(std::string name, std::string help) {
  Param p = make(std::move(name), Type::kString, "", std::move(help));
  p.names_file = true;
  return p;
}
Param Param::choice(std::string name, nlohmann::json default_value, std::vector<std::string> choices,
                    std::string help) {
  return make(std::move(name), Type::kString, std::move(default_value), std::move(help), {}, {}, std::move(choices));
}
Param Param::texts(std::string name, nlohmann::json default_value, std::string help) {
  return make(std::move(name), Type::kStringList, std::move(default_value), std::move(help));
}
Param Param::integers(std::string name, nlohmann::json default_value, std::string help, std::optional<double> min,
                      std::optional<double> max) {
  return make(std::move(name), Type::kIntegerList, std::move(default_value), std::move(help), min, max);
}
Param Param::numbers(std::string name, nlohmann::json default_value, std::string help, std::optional<double> min,
                     std::optional<double> max) {
  return make(std::move(name), Type::kNumberList, std::move(default_value), std::move(help), min, max);
}
Param Param::object(std::string name, nlohmann::json default_value, std::string help) {
  return make(std::move(name), Type::kObject, std::move(default_value), std::move(help));
}

Param Param::or_null() const {
  Param p = *this;
  p.nullable = true;
  return p;
}

std::string Param::type_name() const {
  switch (type) {
    case Type::kBool: return "bool";
    case Type::kInteger: return "integer";
    case Type::kNumber: return "number";
    case Type::kString: return "string";
    case Type::kStringList: return "list of strings";
    case Type::kIntegerList: return "list of integers";
    case Type::kNumberList: return "list of numbers";
    case Type::kObject: return "object";
  }
  return "?";
}

std::string Param::expected() const {
  std::string out;
  switch (type) {
    case Type::kBool: out = "true or false"; break;
    case Type::kInteger: out = "an integer" + range_text(*this); break;
    case Type::kNumber: out = "a number" + range_text(*this); break;
    case Type::kString: {
      if (choices.empty()) {
        out = "a string";
        break;
      }
      std::string list;
      for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
      out = "one of " + list;
      break;
    }
    case Type::kStringList: out = "a list of strings"; break;
    case Type::kIntegerList: out = "a list of integers" + range_text(*this); break;
    case Type::kNumberList: out = "a list of numbers" + range_text(*this); break;
    case Type::kObject: out = "an object"; break;
  }
  return nullable ? out + " or null" : out;
}

bool Param::accepts(const nlohmann::json& v) const {
  if (v.is_null()) return nullable;
  auto all = [&](bool (*ok)(const Param&, const nlohmann::json&)) {
    return v.is_array() && std::all_of(v.begin(), v.end(), [&](const nlohmann::json& e) { return ok(*this, e); });
  };
  switch (type) {
    case Type::kBool: return v.is_boolean();
    case Type::kInteger: return valid_integer(*this, v);
    case Type::kNumber: return valid_number(*this, v);
    case Type::kString:
      return v.is_string() &&
             (choices.empty() || std::find(choices.begin(), choices.end(), v.get<std::string>()) != choices.end());
    case Type::kStringList: return all([](const Param&, const nlohmann::json& e) { return e.is_string(); });
    case Type::kIntegerList: return all(valid_integer);
    case Type::kNumberList: return all(valid_number);
    case Type::kObject: return v.is_object();
  }
  return false;
}

void check(const Owner& owner, const Params& params, const nlohmann::json& given) {
  if (given.is_null()) return;
  if (!given.is_object()) throw std::invalid_argument("job spec: field '" + owner.field + "' must be an object");
  for (auto it = given.begin(); it != given.end(); ++it) {
    const auto param = std::find_if(params.begin(), params.end(), [&](const Param& p) { return p.name == it.key(); });
    if (param == params.end()) {
      std::vector<std::string> names;
      for (const auto& p : params) names.push_back(p.name);
      std::sort(names.begin(), names.end());
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw std::invalid_argument(owner.field + ": field '" + it.key() + "' is not a parameter of " + owner.name +
                                  " (valid: " + (list.empty() ? "none" : list) + ")");
    }
    if (!param->accepts(it.value()))
      throw std::invalid_argument(owner.field + ": field '" + it.key() + "' of " + owner.name + " must be " +
                                  param->expected() + ", got " + it.value().dump());
  }
}

nlohmann::json with_defaults(const Owner& owner, const Params& params, const nlohmann::json& given) {
  check(owner, params, given);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : params)
    if (!p.default_value.is_null() || p.nullable) out[p.name] = p.default_value;
  if (given.is_object())
    for (auto it = given.begin(); it != given.end(); ++it) out[it.key()] = it.value();
  return out;
}

const Param& find(const Params& params, const std::string& name) {
  for (const auto& p : params)
    if (p.name == name) return p;
  throw std::logic_error("no parameter '" + name + "' is declared");
}

void check_unique_names(const std::string& owner, const Params& params) {
  std::set<std::string> seen;
  for (const auto& p : params)
    if (!seen.insert(p.name).second) throw std::logic_error(owner + ": parameter '" + p.name + "' is declared twice");
}

}  // namespace kvbench::params
