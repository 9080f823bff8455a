#include "policies/policy.hpp"

#include <algorithm>

namespace kvbench::policies {

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::kPrefill: return "prefill";
    case Phase::kPrefillBlock: return "prefill-block";
    case Phase::kDecode: return "decode";
  }
  return "?";
}

StatsRequest& StatsRequest::merge(const StatsRequest& other) {
  last_row |= other.last_row;
  column_sums |= other.column_sums;
  column_sq_sums |= other.column_sq_sums;
  window = std::max(window, other.window);
  kv_column_sq_sums |= other.kv_column_sq_sums;
  kv_column_above_mean |= other.kv_column_above_mean;
  queries_before_rope |= other.queries_before_rope;
  output_projection |= other.output_projection;
  hidden_states |= other.hidden_states;
  queries |= other.queries;
  return *this;
}

}  // namespace kvbench::policies
