// `kvbench policies`: every registered policy, its parameters with defaults, and its source.
#include <iostream>

#include "harness/command.hpp"
#include "policies/registry.hpp"

namespace kvbench::harness {
namespace {

int run_policies(bool json) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& p : policies::registered_policies()) {
    if (json) {
      all.push_back({{"name", p.name},
                     {"description", p.description},
                     {"reference", p.reference},
                     {"parameters", p.defaults},
                     {"decides_on_device", p.reads_device.empty()},
                     {"reads_device", p.reads_device}});
      continue;
    }
    std::cout << p.name << "\n  " << p.description << "\n  reference: " << p.reference << "\n";
    std::cout << "  on a GPU: "
              << (p.reads_device.empty() ? "decides on the device (an evicting step never waits for it)"
                                         : "an evicting step reads the device: " + p.reads_device)
              << "\n";
    for (auto it = p.defaults.begin(); it != p.defaults.end(); ++it)
      std::cout << "  --policy-params " << it.key() << " (default " << it.value().dump() << ")\n";
  }
  if (json) std::cout << all.dump(2) << "\n";
  return 0;
}

const CommandRegistration registration("policies", "List the eviction policies with parameters and sources",
                                       [](CLI::App& app) {
                                         auto json = std::make_shared<bool>(false);
                                         app.add_flag("--json", *json, "print JSON");
                                         return [json] { return run_policies(*json); };
                                       });

}  // namespace
}  // namespace kvbench::harness
