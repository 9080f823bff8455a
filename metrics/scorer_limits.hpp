// The stated bounds on the scorers whose work grows with the product of the two texts' lengths,
// and the one error they throw beyond them. Each bound is checked before the work starts (difflib:
// while it runs), so a scorer either returns the reference's exact number within a few seconds
// or fails at once naming itself, the lengths and the limit: never a hang, never a table of
// n·m cells (the reference would itself take hours or exhaust memory on such inputs).
// Documented in metrics/README.md ("Stated bounds"); times measured on the 2-core development
// machine (2026-11-28).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kvbench::metrics {

// Not a reference behaviour: the input is beyond the work kvbench will do for this scorer.
// Callers that turn the reference's own exceptions into a score (LongBench's bare except) let
// this one through.
class ScorerLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// LCS tables that are backtracked (ROUGE-Lsum's union LCS, pltrdy's summary-level rouge-l):
// the sum over (reference sentence, hypothesis sentence) pairs of (words + 1) * (words + 1).
// The backtrack fills each table twice at 2-5 ns a cell here: 5e8 cells take 2-5 s (a single
// pair of ~22,000 x 22,000 words, or 980 x 500,000), in ~30 MB (checkpointed rows).
inline constexpr uint64_t kMaxLcsTableCells = 500'000'000;

// Bit-parallel LCS length (rougeL, the python-Levenshtein ratio of code_sim_score):
// longer * ceil(shorter / 64) word steps at ~2 ns each here: 2e9 steps take ~3.5 s (two
// 355,000-character strings; two 200,000-word token lists need 6.25e8, ~1.5 s), in O(length)
// memory.
inline constexpr uint64_t kMaxLcsLengthWords = 2'000'000'000;

// difflib.SequenceMatcher (code_sim_score backend=difflib): the steps of find_longest_match's
// loops summed over all its calls (each element of a found in b2j, each position of b visited,
// each call and extension), counted as they run; raised at once when the first call alone is
// over. 1e8 steps take 0.1-0.5 s here in cache, ~5 s where every step misses it (1M-character b).
inline constexpr uint64_t kMaxDifflibSteps = 100'000'000;

// "<scorer>: <what> needs <work> <unit>, over the limit of <limit> (metrics/README.md, Stated
// bounds)": one line, no newline.
std::string scorer_limit_message(const std::string& scorer, const std::string& what, uint64_t work,
                                 const std::string& unit, uint64_t limit);

}  // namespace kvbench::metrics
