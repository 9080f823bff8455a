// fuzzywuzzy fuzz.ratio with its two backends (python-Levenshtein's ratio, difflib's
// SequenceMatcher with autojunk). Declared in longbench_metrics.hpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "metrics/longbench_metrics.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {

double levenshtein_ratio(const std::u32string& a, const std::u32string& b) {
  // Levenshtein.ratio: (lensum - d) / lensum, d the edit distance with substitution cost 2,
  // i.e. the indel distance lensum - 2*LCS.
  size_t lensum = a.size() + b.size();
  if (lensum == 0) return 1.0;
  std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = (a[i - 1] == b[j - 1]) ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  size_t lcs = prev[b.size()];
  size_t dist = lensum - 2 * lcs;
  return static_cast<double>(lensum - dist) / static_cast<double>(lensum);
}

namespace {

// difflib.SequenceMatcher(None, a, b) internals needed for ratio().
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
  }

  struct Match {
    size_t i, j, k;
  };

  Match find_longest_match(size_t alo, size_t ahi, size_t blo, size_t bhi) const {
    size_t besti = alo, bestj = blo, bestsize = 0;
    std::unordered_map<size_t, size_t> j2len, newj2len;
    static const std::vector<size_t> nothing;
    for (size_t i = alo; i < ahi; ++i) {
      newj2len.clear();
      auto it = b2j_.find(a_[i]);
      const auto& js = it == b2j_.end() ? nothing : it->second;
      for (size_t j : js) {
        if (j < blo) continue;
        if (j >= bhi) break;
        size_t prevlen = 0;
        if (j > 0) {
          auto p = j2len.find(j - 1);
          if (p != j2len.end()) prevlen = p->second;
        }
        size_t k = newj2len[j] = prevlen + 1;
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      std::swap(j2len, newj2len);
    }
    // No junk (isjunk=None): extend over equal elements on both sides (popular ones included).
    while (besti > alo && bestj > blo && a_[besti - 1] == b_[bestj - 1]) {
      --besti;
      --bestj;
      ++bestsize;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi &&
           a_[besti + bestsize] == b_[bestj + bestsize]) {
      ++bestsize;
    }
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
  const std::u32string& a_;
  const std::u32string& b_;
  std::unordered_map<char32_t, std::vector<size_t>> b2j_;
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
