#include "tasks/task_registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace kvbench::tasks {
namespace {
std::vector<TaskFamily>& table() {
  static std::vector<TaskFamily> families;
  return families;
}
bool is_prefix(const std::string& name) { return !name.empty() && name.back() == '/'; }
}  // namespace

TaskRegistration::TaskRegistration(TaskFamily family) {
  auto& families = table();
  auto pos = std::lower_bound(families.begin(), families.end(), family.name,
                              [](const TaskFamily& f, const std::string& n) { return f.name < n; });
  families.insert(pos, std::move(family));
}

const std::vector<TaskFamily>& registered_task_families() { return table(); }

std::vector<std::string> known_task_names() {
  std::vector<std::string> names;
  for (const auto& f : table()) {
    if (!is_prefix(f.name)) names.push_back(f.name);
    for (const auto& m : f.members) names.push_back(f.name + m);
  }
  return names;
}

std::unique_ptr<Task> make_task(const std::string& name) {
  for (const auto& f : table()) {
    if (!is_prefix(f.name) && f.name == name) return f.make("");
    if (is_prefix(f.name) && name.rfind(f.name, 0) == 0 && name.size() > f.name.size())
      return f.make(name.substr(f.name.size()));
  }
  std::string known;
  for (const auto& n : known_task_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown task '" + name + "' (known: " + known + ")");
}

}  // namespace kvbench::tasks
