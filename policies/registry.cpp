#include "policies/registry.hpp"

#include <map>
#include <stdexcept>

#include "base/registry.hpp"
#include "policies/policy_refusal.hpp"
#include "policies/scorer_registry.hpp"

namespace kvbench::policies {
namespace {
base::Registry<PolicyInfo>& table() {
  static base::Registry<PolicyInfo> policies("policy");
  return policies;
}
params::Owner owner(const std::string& name) { return {"policy '" + name + "'", "policy_params"}; }
std::map<std::string, std::string>& refusals() {
  static std::map<std::string, std::string> refused;
  return refused;
}
}  // namespace

PolicyRefusal::PolicyRefusal(std::string name, std::string why) {
  if (!refusals().emplace(name, std::move(why)).second) throw std::logic_error("policy '" + name + "' is refused twice");
}

const std::string* policy_refusal(const std::string& name) {
  auto it = refusals().find(name);
  return it == refusals().end() ? nullptr : &it->second;
}

PolicyRegistration::PolicyRegistration(PolicyInfo info) {
  params::check_unique_names("policy '" + info.name + "'", info.params);
  table().add(std::move(info));
}

const std::vector<PolicyInfo>& registered_policies() { return table().all(); }

const PolicyInfo& policy_info(const std::string& name) {
  if (const PolicyInfo* info = table().find(name)) return *info;
  if (const std::string* why = policy_refusal(name)) throw std::invalid_argument("policy '" + name + "' is not runnable: " + *why);
  return table().at(name);
}

params::Params policy_params(const std::string& name, const nlohmann::json& given) {
  const PolicyInfo& info = policy_info(name);
  std::string scorer = info.scorer;
  if (!info.scorer_param.empty()) {
    // The wrapper's own parameter says which scorer it wraps (or its default does).
    nlohmann::json named = params::find(info.params, info.scorer_param).default_value;
    if (given.is_object() && given.contains(info.scorer_param)) named = given[info.scorer_param];
    if (!named.is_string() || !find_scorer(named.get<std::string>()))
      throw std::invalid_argument("policy_params: field '" + info.scorer_param + "' of policy '" + name +
                                  "' must be a registered scorer (" + scorer_names() + "), got " + named.dump());
    scorer = named.get<std::string>();
  }
  if (scorer.empty()) return info.params;
  params::Params all = info.params;
  for (params::Param p : scorer_info(scorer).params) {
    if (info.scorer_defaults.contains(p.name)) p.default_value = info.scorer_defaults[p.name];
    all.push_back(std::move(p));
  }
  params::check_unique_names("policy '" + name + "' with scorer '" + scorer + "'", all);
  return all;
}

nlohmann::json resolved_params(const std::string& name, const nlohmann::json& params) {
  return params::with_defaults(owner(name), policy_params(name, params), params);
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
