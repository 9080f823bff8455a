#include "policies/registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace kvbench::policies {
namespace {
std::vector<PolicyInfo>& table() {
  static std::vector<PolicyInfo> policies;
  return policies;
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
      throw std::invalid_argument("policy '" + name + "': parameter '" + it.key() + "' must be of type " +
                                  info.defaults[it.key()].type_name() + ", got " + it.value().dump());
    resolved[it.key()] = it.value();
  }
  return resolved;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const nlohmann::json& params) {
  return policy_info(name).make(resolved_params(name, params));
}

}  // namespace kvbench::policies
