#include "policies/registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace kvbench::policies {
namespace {
std::vector<PolicyInfo>& table() {
  static std::vector<PolicyInfo> policies;
  return policies;
}

// "an integer" where nlohmann says "number" for both 2 and 2.5.
std::string kind_name(const nlohmann::json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_boolean()) return "true or false";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "a list";
  return "an object";
}

bool same_kind(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) return !(a.is_number_integer() && b.is_number_float());
  return a.type() == b.type() || a.is_null();
}
}  // namespace

PolicyRegistration::PolicyRegistration(PolicyInfo info) {
  auto& policies = table();
  auto pos = std::lower_bound(policies.begin(), policies.end(), info.name,
                              [](const PolicyInfo& p, const std::string& n) { return p.name < n; });
  policies.insert(pos, std::move(info));
}

const std::vector<PolicyInfo>& registered_policies() { return table(); }

const PolicyInfo& policy_info(const std::string& name) {
  for (const auto& info : table())
    if (info.name == name) return info;
  std::string known;
  for (const auto& info : table()) known += (known.empty() ? "" : ", ") + info.name;
  throw std::invalid_argument("unknown policy '" + name + "' (known: " + known + ")");
}

nlohmann::json resolved_params(const std::string& name, const nlohmann::json& params) {
  const PolicyInfo& info = policy_info(name);
  nlohmann::json resolved = info.defaults;
  if (params.is_null()) return resolved;
  if (!params.is_object()) throw std::invalid_argument("policy '" + name + "': parameters must be a JSON object");
  for (auto it = params.begin(); it != params.end(); ++it) {
    if (!info.defaults.contains(it.key()))
      throw std::invalid_argument("policy '" + name + "': unknown parameter '" + it.key() + "'");
    if (!same_kind(info.defaults[it.key()], it.value()))
      throw std::invalid_argument("policy '" + name + "': parameter '" + it.key() + "' must be " +
                                  kind_name(info.defaults[it.key()]) + ", got " + it.value().dump());
    resolved[it.key()] = it.value();
  }
  return resolved;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const nlohmann::json& params) {
  const nlohmann::json resolved = resolved_params(name, params);
  try {
    return policy_info(name).make(resolved);
  } catch (const std::invalid_argument& e) {
    // Shared parsers (head_reduce, gqa, ...) do not know which policy they serve.
    const std::string message = e.what();
    if (message.rfind(name + ":", 0) == 0 || message.rfind("policy '" + name + "'", 0) == 0) throw;
    throw std::invalid_argument("policy '" + name + "': " + message);
  }
}

}  // namespace kvbench::policies
