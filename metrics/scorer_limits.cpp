#include "metrics/scorer_limits.hpp"

namespace kvbench::metrics {

std::string scorer_limit_message(const std::string& scorer, const std::string& what, uint64_t work,
                                 const std::string& unit, uint64_t limit) {
  return scorer + ": " + what + " need " + std::to_string(work) + " " + unit + ", over the limit of " +
         std::to_string(limit) + " (a stated bound of kvbench, see metrics/README.md \"Stated bounds\")";
}

}  // namespace kvbench::metrics
