// Length of a longest common subsequence, bit-parallel (Allison & Dix 1986, Hyyrö 2004): one row
// of the LCS table is kept as its 0/1 increments, one bit per element of the shorter sequence,
// and each element of the longer one updates the row with ceil(shorter/64) word operations.
// O(|a|·|b|/64) time, O(|a|+|b|) memory; the result equals the plain dynamic program's (tested
// against it on random sequences). Internal to metrics/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kvbench::metrics::detail {

size_t lcs_length(const std::vector<int>& a, const std::vector<int>& b);
size_t lcs_length(const std::u32string& a, const std::u32string& b);

// The 64-bit word steps lcs_length takes for sequences of these lengths, at most:
// longer * ceil(shorter / 64). The scorers compare it with kMaxLcsLengthWords before starting.
uint64_t lcs_length_words(size_t a, size_t b);

// Throws ScorerLimitError "<scorer>: <a> x <b> <unit> need ... bit-parallel LCS word steps, over
// the limit ..." when lcs_length_words(a, b) exceeds kMaxLcsLengthWords.
void require_lcs_length_within_bound(const std::string& scorer, size_t a, size_t b, const std::string& unit);

}  // namespace kvbench::metrics::detail
