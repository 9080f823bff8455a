#include "metrics/lcs_backtrack.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace kvbench::metrics::detail {

namespace {

// Fills rows r0+1 .. r1 of the table (row r0 given in `first`) into `out` (row-major,
// (r1 - r0 + 1) rows of cols+1), out row 0 = first.
void fill_rows(const std::vector<int>& x, const std::vector<int>& y, size_t r0, size_t r1,
               const uint32_t* first, std::vector<uint32_t>& out) {
  size_t w = y.size() + 1;
  out.resize((r1 - r0 + 1) * w);
  std::copy(first, first + w, out.begin());
  for (size_t i = r0 + 1; i <= r1; ++i) {
    uint32_t* cur = &out[(i - r0) * w];
    const uint32_t* up = cur - w;
    cur[0] = 0;
    int xi = x[i - 1];
    for (size_t j = 1; j < w; ++j) {
      cur[j] = (xi == y[j - 1]) ? up[j - 1] + 1 : std::max(up[j], cur[j - 1]);
    }
  }
}

}  // namespace

LcsPath lcs_backtrack(const std::vector<int>& x, const std::vector<int>& y, LcsTie tie) {
  LcsPath path;
  if (x.empty() || y.empty()) return path;
  // The table is stored with the longer sequence down the rows (t(i, j) of x, y is row j,
  // column i of y, x when y is longer): checkpointing by rows then keeps ~2*sqrt(rows) rows of
  // the shorter width, at most ~27 MB for the 5e8 cells of kMaxLcsTableCells, however unequal
  // the lengths. The values, hence the path, are the same either way.
  const bool transposed = x.size() < y.size();
  const std::vector<int>& a = transposed ? y : x;
  const std::vector<int>& b = transposed ? x : y;
  size_t rows = a.size(), w = b.size() + 1;
  // Block height: whole table when small, ~sqrt(rows) otherwise.
  size_t block = (rows + 1) * w <= (size_t{1} << 22)
                     ? rows
                     : std::max<size_t>(1, static_cast<size_t>(std::sqrt(static_cast<double>(rows))));
  // Checkpoint rows 0, block, 2*block, ... (just row 0 for a whole table). Buffers are reused
  // across calls: summary-level ROUGE runs this for every sentence pair.
  thread_local std::vector<std::vector<uint32_t>> checkpoints;
  thread_local std::vector<uint32_t> rows_buf;
  checkpoints.clear();
  {
    std::vector<uint32_t> zero(w, 0), buf;
    checkpoints.push_back(zero);
    for (size_t r0 = 0; r0 + block < rows; r0 += block) {
      fill_rows(a, b, r0, r0 + block, checkpoints.back().data(), buf);
      checkpoints.emplace_back(buf.end() - static_cast<long>(w), buf.end());
    }
  }
  size_t loaded_r0 = SIZE_MAX;
  auto stored = [&](size_t r, size_t c) -> uint32_t { return rows_buf[(r - loaded_r0) * w + c]; };
  auto t = [&](size_t i, size_t j) -> uint32_t { return transposed ? stored(j, i) : stored(i, j); };
  size_t i = x.size(), j = y.size();
  while (i > 0 && j > 0) {
    const size_t row = transposed ? j : i;     // t(i, j - 1) and t(i - 1, j) lie in stored rows
    size_t r0 = ((row - 1) / block) * block;  // row - 1 and row: the block holding both
    if (r0 != loaded_r0) {
      fill_rows(a, b, r0, std::min(r0 + block, rows), checkpoints[r0 / block].data(), rows_buf);
      loaded_r0 = r0;
    }
    ++path.steps;
    if (x[i - 1] == y[j - 1]) {
      path.x_indices.push_back(i - 1);
      --i;
      --j;
    } else if (tie == LcsTie::kGoogle) {
      if (t(i, j - 1) > t(i - 1, j)) {
        --j;
      } else {
        --i;
      }
    } else {
      if (t(i - 1, j) > t(i, j - 1)) {
        --i;
      } else {
        --j;
      }
    }
  }
  return path;
}

uint64_t mul_saturating(uint64_t a, uint64_t b) {
  return (a != 0 && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

}  // namespace kvbench::metrics::detail
