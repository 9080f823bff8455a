#include "tasks/scored_mean.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

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

namespace {

// The first NaN or infinity under `value`: its path ("a.b[2]") and the value; path "" if none.
std::pair<std::string, double> first_non_finite(const nlohmann::json& value, const std::string& path) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) return {path, value.get<double>()};
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it)
      if (auto found = first_non_finite(it.value(), path.empty() ? it.key() : path + "." + it.key()); !found.first.empty())
        return found;
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i)
      if (auto found = first_non_finite(value[i], path + "[" + std::to_string(i) + "]"); !found.first.empty())
        return found;
  }
  return {"", 0.0};
}

}  // namespace

void require_finite(const std::string& task, const nlohmann::json& metrics) {
  const auto [path, value] = first_non_finite(metrics, "");
  if (path.empty()) return;
  throw std::runtime_error(task + ": metric '" + path + "' is " + (std::isnan(value) ? "NaN" : "infinite") +
                           ": the model's outputs are not finite (check the checkpoint and its config)");
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
