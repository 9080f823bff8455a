#include "tasks/task_registry.hpp"

#include "base/registry.hpp"

namespace kvbench::tasks {
namespace {
base::Registry<TaskFamily>& table() {
  static base::Registry<TaskFamily> families("task");
  return families;
}
bool is_prefix(const std::string& name) { return !name.empty() && name.back() == '/'; }
}  // namespace

TaskRegistration::TaskRegistration(TaskFamily family) { table().add(std::move(family)); }

const std::vector<TaskFamily>& registered_task_families() { return table().all(); }

std::vector<std::string> known_task_names() {
  std::vector<std::string> names;
  for (const auto& f : table().all()) {
    if (!is_prefix(f.name)) names.push_back(f.name);
    for (const auto& m : f.members) names.push_back(f.name + m);
  }
  return names;
}

const TaskFamily& task_family(const std::string& name) {
  for (const auto& f : table().all()) {
    if (!is_prefix(f.name) && f.name == name) return f;
    if (is_prefix(f.name) && name.rfind(f.name, 0) == 0 && name.size() > f.name.size()) return f;
  }
  throw table().unknown(name, known_task_names());
}

std::unique_ptr<Task> make_task(const std::string& name) {
  const TaskFamily& f = task_family(name);
  return f.make(is_prefix(f.name) ? name.substr(f.name.size()) : "");
}

}  // namespace kvbench::tasks
