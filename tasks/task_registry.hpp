#pragma once
// Task names -> factories. A family ("longbench/", "mmlu/", "fidelity/") registers a prefix and
// receives the rest of the name.
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tasks/task.hpp"

namespace kvbench::tasks {

struct TaskFamily {
  std::string name;         // "tinystories" or a prefix ending in '/': "longbench/"
  std::string description;
  std::vector<std::string> members;  // for prefixes: the names kvbench knows (listed by `kvbench tasks`)
  std::function<std::unique_ptr<Task>(const std::string& member)> make;  // member = "" for plain names
};

struct TaskRegistration {
  explicit TaskRegistration(TaskFamily family);
};

const std::vector<TaskFamily>& registered_task_families();
// Throws std::invalid_argument listing the known names.
std::unique_ptr<Task> make_task(const std::string& name);
// The family a task name belongs to (itself, or the prefix family of "longbench/qasper").
const TaskFamily& task_family(const std::string& name);
std::vector<std::string> known_task_names();

}  // namespace kvbench::tasks
