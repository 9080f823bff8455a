#pragma once
// Name -> factory from JSON parameters. Every policy registers itself in its own file with
// PolicyRegistration; `kvbench policies` lists them with their parameters and paper.
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "policies/policy.hpp"

namespace kvbench::policies {

struct PolicyInfo {
  std::string name;
  std::string description;
  std::string reference;    // the paper (and code) whose definition it follows
  nlohmann::json defaults;  // every parameter with its default
  // Receives the defaults overlaid with the user's parameters (unknown keys already rejected).
  std::function<std::unique_ptr<Policy>(const nlohmann::json& params)> make;
  // Why an evicting decode step reads a value back from the cache's device (on CUDA: the host
  // waits for the GPU); empty when the policy decides with tensor ops on the device. Checked for
  // every policy by tests/models/meta_device_test.cpp.
  std::string reads_device = {};
};

struct PolicyRegistration {
  explicit PolicyRegistration(PolicyInfo info);
};

const std::vector<PolicyInfo>& registered_policies();  // sorted by name
const PolicyInfo& policy_info(const std::string& name);

// Throws std::invalid_argument naming the policy and the offending key for an unknown policy,
// an unknown parameter, or a parameter of the wrong JSON type.
std::unique_ptr<Policy> make_policy(const std::string& name, const nlohmann::json& params = nlohmann::json::object());
nlohmann::json resolved_params(const std::string& name, const nlohmann::json& params);

}  // namespace kvbench::policies
