// One LCS path of two id sequences, backtracked from the bottom-right corner with a chosen
// tie rule, in bounded memory: tables up to 4M cells are kept whole; larger ones keep every
// S-th row (S ~ sqrt(rows), rows along the longer sequence) and recompute one block of rows at
// a time while backtracking, so a 10k x 10k pair needs ~2M cells instead of 100M. Internal to
// metrics/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvbench::metrics::detail {

enum class LcsTie {
  // rouge_score _backtrack_norec: on a mismatch move j only if t[i][j-1] > t[i-1][j], else i.
  kGoogle,
  // pltrdy _recon: on a mismatch move i only if t[i-1][j] > t[i][j-1], else j.
  kPltrdy,
};

struct LcsPath {
  std::vector<size_t> x_indices;  // matched positions in x, from the last match to the first
  size_t steps = 0;               // backtrack steps taken (matches + moves)
};

LcsPath lcs_backtrack(const std::vector<int>& x, const std::vector<int>& y, LcsTie tie);

// a * b, saturating at UINT64_MAX. The table cells of all the (x, y) pairs of a summary-level
// score are (sum over x of |x|+1) * (sum over y of |y|+1); callers compare that with
// kMaxLcsTableCells (scorer_limits.hpp) before backtracking any.
uint64_t mul_saturating(uint64_t a, uint64_t b);

}  // namespace kvbench::metrics::detail
