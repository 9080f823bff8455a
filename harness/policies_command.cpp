// `kvbench policies`: every registered policy, its parameters (declared once, base/param.hpp) and
// its source; --json prints [{"name", "summary", "source", "params": [...], ...}].
#include <iostream>

#include "base/param_listing.hpp"
#include "harness/command.hpp"
#include "policies/registry.hpp"
#include "policies/scorer_registry.hpp"

namespace kvbench::harness {
namespace {

int run_policies(bool json) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& p : policies::registered_policies()) {
    // A wrapper lists its default scorer's parameters too (another scorer brings its own).
    const params::Params declared = policies::policy_params(p.name);
    if (json) {
      nlohmann::json entry = {{"name", p.name},
                              {"summary", p.summary},
                              {"source", p.source},
                              {"params", params::describe(declared)},
                              {"decides_on_device", p.reads_device.empty()},
                              {"reads_device", p.reads_device}};
      if (!p.scorer.empty()) entry["scorer"] = p.scorer;
      if (!p.scorer_param.empty()) entry["scorer_param"] = p.scorer_param;
      all.push_back(entry);
      continue;
    }
    std::cout << p.name << "\n  " << p.summary << "\n  source: " << p.source << "\n";
    std::cout << "  on a GPU: "
              << (p.reads_device.empty() ? "decides on the device (an evicting step never waits for it)"
                                         : "an evicting step reads the device: " + p.reads_device)
              << "\n";
    if (!p.scorer_param.empty())
      std::cout << "  wraps the scorer named by '" << p.scorer_param << "': " << policies::scorer_names()
                << " (each brings its own parameters; the default's are listed)\n";
    std::cout << params::text_listing(declared, "  --policy-params ");
  }
  if (json) std::cout << all.dump(2) << "\n";
  return 0;
}

const CommandRegistration policies_registration("policies", "List the eviction policies with parameters and sources",
                                       [](CLI::App& app) {
                                         auto json = std::make_shared<bool>(false);
                                         app.add_flag("--json", *json, "print JSON");
                                         return [json] { return run_policies(*json); };
                                       });

}  // namespace
}  // namespace kvbench::harness
