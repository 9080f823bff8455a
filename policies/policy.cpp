#include "policies/policy.hpp"

#include <algorithm>
#include <tuple>

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
  column_max |= other.column_max;
  window = std::max(window, other.window);
  kv_column_sq_sums |= other.kv_column_sq_sums;
  kv_column_above_mean |= other.kv_column_above_mean;
  queries_before_rope |= other.queries_before_rope;
  output_projection |= other.output_projection;
  hidden_states |= other.hidden_states;
  queries |= other.queries;
  projections |= other.projections;
  return *this;
}

bool StatsRequest::operator==(const StatsRequest& o) const {
  auto fields = [](const StatsRequest& r) {
    return std::tie(r.last_row, r.column_sums, r.column_sq_sums, r.column_max, r.window, r.kv_column_sq_sums,
                    r.kv_column_above_mean, r.queries_before_rope, r.output_projection, r.hidden_states, r.queries,
                    r.projections);
  };
  return fields(*this) == fields(o);
}

}  // namespace kvbench::policies
