#pragma once
// Name -> factory from JSON parameters. Every policy registers itself in its own file with
// PolicyRegistration, declaring each parameter once (base/param.hpp); `kvbench policies` lists
// them, the docs' tables are generated from them, and job specs are checked and completed with
// their defaults before a job id is computed.
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/param.hpp"
#include "policies/policy.hpp"

namespace kvbench::policies {

struct PolicyInfo {
  std::string name;
  std::string summary;
  std::string source;  // the paper (and code) whose definition it follows
  params::Params params;
  // Receives every declared parameter (defaults overlaid with the user's, already checked).
  std::function<std::unique_ptr<Policy>(const nlohmann::json& params)> make;
  // Why an evicting decode step reads a value back from the cache's device (on CUDA: the host
  // waits for the GPU); empty when the policy decides with tensor ops on the device. Checked for
  // every policy by tests/models/meta_device_test.cpp.
  std::string reads_device = {};
  // A policy built on a scorer (policies/scorer_registry.hpp) gets that scorer's parameters
  // beside its own: a fixed one (`scorer`: PyramidKV's snapkv), or the one a wrapper's parameter
  // names (`scorer_param`: Ada-KV's "scorer"). `scorer_defaults` are the policy's own defaults for
  // some of them (PyramidKV's window 8 where SnapKV's is 32).
  std::string scorer = {};
  std::string scorer_param = {};
  nlohmann::json scorer_defaults = nlohmann::json::object();
};

struct PolicyRegistration {
  explicit PolicyRegistration(PolicyInfo info);
};

const std::vector<PolicyInfo>& registered_policies();  // sorted by name
// Throws std::invalid_argument "unknown policy 'x' (known: ...)".
const PolicyInfo& policy_info(const std::string& name);

// Every parameter `name` accepts given `params` (a wrapper's depend on the scorer they name).
params::Params policy_params(const std::string& name, const nlohmann::json& params = nlohmann::json::object());

// Throws std::invalid_argument naming the policy and the offending key for an unknown policy,
// an unknown parameter, or a bad value ("policy_params: field 'x' of policy 'p' must be ...").
std::unique_ptr<Policy> make_policy(const std::string& name, const nlohmann::json& params = nlohmann::json::object());
// The parameters checked and completed with every default.
nlohmann::json resolved_params(const std::string& name, const nlohmann::json& params);

}  // namespace kvbench::policies
