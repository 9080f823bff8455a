#include "metrics/lcs_length.hpp"

#include <algorithm>
#include <unordered_map>

#include "metrics/scorer_limits.hpp"

namespace kvbench::metrics::detail {

namespace {

__extension__ typedef unsigned __int128 Wide;

// Row i of the LCS table of (pattern, text[0..i)) as bits: bit j of ~V is set when
// t[i][j+1] = t[i][j] + 1, so LCS = popcount(~V) over the pattern's bits. For a text element c
// with match vector M (bits of the pattern positions equal to c) the next row is
// V' = (V + (V & M)) | (V & ~M), the addition carrying across words.
template <typename Seq>
size_t bit_parallel(const Seq& pattern, const Seq& text) {
  using Sym = typename Seq::value_type;
  const size_t m = pattern.size(), words = (m + 63) / 64;
  if (m == 0 || text.empty()) return 0;
  // Match vectors: a symbol with at least `words` positions keeps a dense vector (at most
  // m / words <= 64 such symbols, so <= 64 * words words in all); a rarer one keeps its
  // positions and is scattered into `scratch` for its row and cleared after, which costs less
  // than the row's own pass.
  struct Match {
    std::vector<uint32_t> positions;
    std::vector<uint64_t> dense;
  };
  std::unordered_map<Sym, Match> match;
  for (size_t j = 0; j < m; ++j) match[pattern[j]].positions.push_back(static_cast<uint32_t>(j));
  for (auto& kv : match) {
    Match& mt = kv.second;
    if (mt.positions.size() < words) continue;
    mt.dense.assign(words, 0);
    for (uint32_t j : mt.positions) mt.dense[j / 64] |= uint64_t{1} << (j % 64);
    mt.positions.clear();
    mt.positions.shrink_to_fit();
  }
  std::vector<uint64_t> v(words, ~uint64_t{0}), scratch(words, 0);
  for (const Sym c : text) {
    auto it = match.find(c);
    if (it == match.end()) continue;  // no match in the pattern: the row is unchanged
    const Match& mt = it->second;
    const uint64_t* mv = mt.dense.data();
    if (mt.dense.empty()) {
      for (uint32_t j : mt.positions) scratch[j / 64] |= uint64_t{1} << (j % 64);
      mv = scratch.data();
    }
    uint64_t carry = 0;
    for (size_t k = 0; k < words; ++k) {
      const uint64_t x = v[k], u = x & mv[k];
      const Wide sum = static_cast<Wide>(x) + u + carry;  // one add-with-carry
      carry = static_cast<uint64_t>(sum >> 64);
      v[k] = static_cast<uint64_t>(sum) | (x - u);
    }
    if (mt.dense.empty()) {
      for (uint32_t j : mt.positions) scratch[j / 64] = 0;
    }
  }
  size_t lcs = 0;
  for (size_t k = 0; k < words; ++k) {
    uint64_t bits = ~v[k];
    if (k + 1 == words && m % 64 != 0) bits &= (uint64_t{1} << (m % 64)) - 1;  // past the pattern
    lcs += static_cast<size_t>(__builtin_popcountll(bits));
  }
  return lcs;
}

template <typename Seq>
size_t lcs_of(const Seq& a, const Seq& b) {
  // The shorter sequence is the bit row: fewer words per step.
  return a.size() <= b.size() ? bit_parallel(a, b) : bit_parallel(b, a);
}

}  // namespace

size_t lcs_length(const std::vector<int>& a, const std::vector<int>& b) { return lcs_of(a, b); }
size_t lcs_length(const std::u32string& a, const std::u32string& b) { return lcs_of(a, b); }

uint64_t lcs_length_words(size_t a, size_t b) {
  const uint64_t shorter = std::min(a, b), longer = std::max(a, b);
  return longer * ((shorter + 63) / 64);
}

void require_lcs_length_within_bound(const std::string& scorer, size_t a, size_t b, const std::string& unit) {
  const uint64_t work = lcs_length_words(a, b);
  if (work <= kMaxLcsLengthWords) return;
  throw ScorerLimitError(scorer_limit_message(scorer, std::to_string(a) + " x " + std::to_string(b) + " " + unit, work,
                                              "bit-parallel LCS word steps", kMaxLcsLengthWords));
}

}  // namespace kvbench::metrics::detail
