#include "tasks/scored_mean.hpp"

#include <stdexcept>

namespace kvbench::tasks {

nlohmann::json mean_or_null(double sum, int64_t count) {
  if (count == 0) return nullptr;
  return sum / static_cast<double>(count);
}

void require_scored(const std::string& task, int64_t scored, const std::string& why) {
  if (scored > 0) return;
  throw std::runtime_error(task + ": no example was scored" + (why.empty() ? "" : " (" + why + ")") +
                           "; a metric over zero examples has no value");
}

std::string skipped_counters(const nlohmann::json& metrics) {
  std::string out;
  if (!metrics.is_object()) return out;
  for (auto it = metrics.begin(); it != metrics.end(); ++it)
    if (it.key().rfind("skipped", 0) == 0 && it.value().is_number() && it.value().get<double>() > 0)
      out += (out.empty() ? "" : ", ") + it.key() + " = " + it.value().dump();
  return out;
}

}  // namespace kvbench::tasks
