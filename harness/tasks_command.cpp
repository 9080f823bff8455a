// `kvbench tasks`: every task with its settings (prompt template, truncation, decoding, metric).
#include <iostream>

#include "harness/command.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::harness {
namespace {

int run_tasks(bool json) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& family : tasks::registered_task_families()) {
    std::vector<std::string> names;
    if (family.name.back() == '/') {
      for (const auto& m : family.members) names.push_back(family.name + m);
    } else {
      names.push_back(family.name);
    }
    for (const auto& name : names) {
      const auto task = tasks::make_task(name);
      nlohmann::json settings = task->settings();
      nlohmann::json accepted = nlohmann::json::object();  // task_params: name -> what the value must be
      for (const auto& p : task->parameters()) accepted[p.name] = p.expected();
      settings["task_params"] = accepted;
      if (json) {
        all.push_back({{"name", name}, {"description", family.description}, {"settings", settings}});
      } else {
        std::cout << name << "\n  " << family.description << "\n";
        for (auto it = settings.begin(); it != settings.end(); ++it)
          std::cout << "  " << it.key() << ": " << (it->is_string() ? it->get<std::string>() : it->dump()) << "\n";
      }
    }
  }
  if (json) std::cout << all.dump(2) << "\n";
  return 0;
}

const CommandRegistration registration("tasks", "List the tasks with their prompt, truncation, decoding and metric",
                                       [](CLI::App& app) {
                                         auto json = std::make_shared<bool>(false);
                                         app.add_flag("--json", *json, "print JSON");
                                         return [json] { return run_tasks(*json); };
                                       });

}  // namespace
}  // namespace kvbench::harness
