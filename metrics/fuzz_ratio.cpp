// fuzzywuzzy fuzz.ratio with its two backends (python-Levenshtein's ratio, difflib's
// SequenceMatcher with autojunk). Declared in longbench_metrics.hpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "metrics/lcs_length.hpp"
#include "metrics/longbench_metrics.hpp"
#include "metrics/scorer_limits.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {

double levenshtein_ratio(const std::u32string& a, const std::u32string& b) {
  // Levenshtein.ratio: (lensum - d) / lensum, d the edit distance with substitution cost 2,
  // i.e. the indel distance lensum - 2*LCS.
  size_t lensum = a.size() + b.size();
  if (lensum == 0) return 1.0;
  detail::require_lcs_length_within_bound("fuzz.ratio (python-Levenshtein)", a.size(), b.size(), "code points");
  size_t lcs = detail::lcs_length(a, b);
  size_t dist = lensum - 2 * lcs;
  return static_cast<double>(lensum - dist) / static_cast<double>(lensum);
}

namespace {

// difflib.SequenceMatcher(None, a, b) internals needed for ratio(). find_longest_match is the
// reference's loop with two exact shortcuts: elements of a absent from b2j (popular or not in b)
// are skipped, since they only empty j2len, which a row with no stamp reproduces; and the j2len
// dicts are two arrays over b's positions stamped with the row (the element of a) that wrote them.
class SequenceMatcher {
 public:
  SequenceMatcher(const std::u32string& a, const std::u32string& b) : a_(a), b_(b) {
    for (size_t j = 0; j < b.size(); ++j) b2j_[b[j]].push_back(j);
    // autojunk: for len(b) >= 200, elements occurring more than len(b)//100 + 1 times are
    // "popular" and dropped from b2j (but not junk: extension still walks over them).
    if (b.size() >= 200) {
      size_t ntest = b.size() / 100 + 1;
      for (auto it = b2j_.begin(); it != b2j_.end();) {
        it = (it->second.size() > ntest) ? b2j_.erase(it) : std::next(it);
      }
    }
    // b2j_ is final: pointers to its vectors stay valid.
    for (size_t i = 0; i < a.size(); ++i) {
      auto it = b2j_.find(a[i]);
      if (it != b2j_.end()) seeds_.push_back({i, &it->second});
    }
    // The first call, find_longest_match(0, len(a), 0, len(b)), visits every position of every
    // seed: when that alone passes the bound the error is certain, so raise it before any work.
    uint64_t first_call = 0;
    for (const Seed& seed : seeds_) first_call += 1 + seed.js->size();
    if (first_call > kMaxDifflibSteps) limit_error(first_call);
    if (!seeds_.empty()) j2len_.assign(2 * b.size(), Entry{0, 0});
  }

  struct Match {
    size_t i, j, k;
  };

  Match find_longest_match(size_t alo, size_t ahi, size_t blo, size_t bhi) const {
    size_t besti = alo, bestj = blo, bestsize = 0;
    // Rows of this call are base + 1 + (i - alo): unique across calls, consecutive for
    // consecutive i, so "j2len of row i - 1" is a stamp equal to row - 1.
    const uint64_t base = next_row_;
    next_row_ += (ahi - alo) + 1;
    auto seed = std::lower_bound(seeds_.begin(), seeds_.end(), alo,
                                 [](const Seed& s, size_t i) { return s.i < i; });
    for (; seed != seeds_.end() && seed->i < ahi; ++seed) {
      const size_t i = seed->i;
      const uint64_t row = base + 1 + (i - alo);
      const size_t cur = static_cast<size_t>(row & 1), prev = cur ^ 1;
      size_t visited = 0;  // positions of a[i] in b looked at, as the reference's loop does
      for (size_t j : *seed->js) {
        ++visited;
        if (j < blo) continue;
        if (j >= bhi) break;
        size_t prevlen = 0;
        if (j > 0) {
          const Entry& e = j2len_[2 * (j - 1) + prev];
          if (e.row == row - 1) prevlen = e.len;
        }
        size_t k = prevlen + 1;
        j2len_[2 * j + cur] = Entry{row, k};
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      count_steps(1 + visited);
    }
    // No junk (isjunk=None): extend over equal elements on both sides (popular ones included).
    size_t before = bestsize;
    while (besti > alo && bestj > blo && a_[besti - 1] == b_[bestj - 1]) {
      --besti;
      --bestj;
      ++bestsize;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi &&
           a_[besti + bestsize] == b_[bestj + bestsize]) {
      ++bestsize;
    }
    count_steps(1 + bestsize - before);
    return {besti, bestj, bestsize};
  }

  // Sum of the sizes of get_matching_blocks() (independent of the queue order).
  size_t matches() const {
    size_t total = 0;
    std::vector<std::array<size_t, 4>> queue = {{0, a_.size(), 0, b_.size()}};
    while (!queue.empty()) {
      auto [alo, ahi, blo, bhi] = queue.back();
      queue.pop_back();
      Match m = find_longest_match(alo, ahi, blo, bhi);
      if (m.k) {
        total += m.k;
        if (alo < m.i && blo < m.j) queue.push_back({alo, m.i, blo, m.j});
        if (m.i + m.k < ahi && m.j + m.k < bhi) queue.push_back({m.i + m.k, ahi, m.j + m.k, bhi});
      }
    }
    return total;
  }

 private:
  // The reference's loops are quadratic on adversarial text (many elements that are frequent,
  // but under autojunk's 1% threshold, and many small matches); stop beyond the stated bound.
  // A step: an element of a in b2j, a position of it in b looked at, a call, an extension.
  void count_steps(uint64_t n) const {
    steps_ += n;
    if (steps_ > kMaxDifflibSteps) limit_error(steps_);
  }

  [[noreturn]] void limit_error(uint64_t steps) const {
    throw ScorerLimitError(scorer_limit_message(
        "fuzz.ratio (difflib)", std::to_string(a_.size()) + " x " + std::to_string(b_.size()) + " code points",
        steps, "or more SequenceMatcher steps", kMaxDifflibSteps));
  }

  struct Seed {
    size_t i;                        // a position of a
    const std::vector<size_t>* js;   // b2j[a[i]]
  };

  const std::u32string& a_;
  const std::u32string& b_;
  std::unordered_map<char32_t, std::vector<size_t>> b2j_;
  std::vector<Seed> seeds_;  // the positions of a whose element is in b2j, ascending
  // j2len[j] of the last row with parity p at 2 * j + p, valid where `row` is the row wanted.
  // Entries of j - 1 and j sit side by side: one cache line for the read and the write.
  struct Entry {
    uint64_t row;
    size_t len;
  };
  mutable std::vector<Entry> j2len_;
  mutable uint64_t next_row_ = 1;  // rows start at 2: no row - 1 equals the initial stamp 0
  mutable uint64_t steps_ = 0;
};

}  // namespace

double difflib_ratio(const std::u32string& a, const std::u32string& b) {
  size_t length = a.size() + b.size();
  if (length == 0) return 1.0;
  SequenceMatcher sm(a, b);
  return 2.0 * static_cast<double>(sm.matches()) / static_cast<double>(length);
}

int fuzz_ratio(const std::string& a, const std::string& b, FuzzBackend backend) {
  // Decorators, outermost first: check_for_none, check_for_equivalence (equal -> 100, so
  // "" vs "" is 100), check_empty_string (either empty -> 0).
  if (a == b) return 100;
  if (a.empty() || b.empty()) return 0;
  std::u32string ua = utf8_decode(a), ub = utf8_decode(b);
  double r = backend == FuzzBackend::Levenshtein ? levenshtein_ratio(ua, ub) : difflib_ratio(ua, ub);
  // utils.intr: int(round(100 * r)), Python round = half to even (the default FP mode).
  return static_cast<int>(std::nearbyint(100 * r));
}

}  // namespace kvbench::metrics
