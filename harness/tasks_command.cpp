// `kvbench tasks`: every task with its settings (prompt template, truncation, decoding, metric)
// and its parameters (declared once, base/param.hpp); --json prints
// [{"name", "summary", "source", "params": [...], "settings": {...}}].
#include <iostream>

#include "base/param_listing.hpp"
#include "harness/command.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::harness {
namespace {

// Where a task's protocol comes from, as its settings name it.
std::string source_of(const nlohmann::json& settings) {
  for (const char* key : {"source", "benchmark", "reference"})
    if (settings.contains(key) && settings[key].is_string()) return settings[key];
  return "";
}

int run_tasks(bool json) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& name : tasks::known_task_names()) {
    const auto task = tasks::make_task(name);
    nlohmann::json settings = task->settings();
    const std::string summary = tasks::task_family(name).description;
    if (json) {
      all.push_back({{"name", name},
                     {"summary", summary},
                     {"source", source_of(settings)},
                     {"params", params::describe(task->parameters())},
                     {"settings", settings}});
      continue;
    }
    std::cout << name << "\n  " << summary << "\n";
    for (auto it = settings.begin(); it != settings.end(); ++it)
      std::cout << "  " << it.key() << ": " << (it->is_string() ? it->get<std::string>() : it->dump()) << "\n";
    std::cout << "  task_params:\n" << params::text_listing(task->parameters(), "    ");
  }
  if (json) std::cout << all.dump(2) << "\n";
  return 0;
}

const CommandRegistration tasks_registration("tasks", "List the tasks with their prompt, truncation, decoding and metric",
                                       [](CLI::App& app) {
                                         auto json = std::make_shared<bool>(false);
                                         app.add_flag("--json", *json, "print JSON");
                                         return [json] { return run_tasks(*json); };
                                       });

}  // namespace
}  // namespace kvbench::harness
