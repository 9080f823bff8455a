// The quadratic scorers on long inputs (issue #31, H5): the fast exact algorithms against the
// plain definitions they replace (bit-parallel LCS length vs the dynamic program, difflib's
// stamped arrays vs the reference's dict loop, the early RecursionError vs the depth rule), and
// 200,000-word inputs to rouge_score, pltrdy / LongBench rouge_score and code_sim_score, each
// giving the exact result or the stated bound's ScorerLimitError (metrics/scorer_limits.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <unordered_map>

#include "metrics/lcs_length.hpp"
#include "metrics/longbench_metrics.hpp"
#include "metrics/rouge_pltrdy.hpp"
#include "metrics/rouge_score.hpp"
#include "metrics/scorer_limits.hpp"
#include "metrics/unicode.hpp"

using namespace kvbench::metrics;

namespace {

// The plain LCS dynamic program (two rows), the definition lcs_length must reproduce.
template <typename Seq>
size_t plain_lcs(const Seq& a, const Seq& b) {
  std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<int> random_ids(std::mt19937& rng, size_t n, int alphabet) {
  std::vector<int> v(n);
  for (auto& x : v) x = static_cast<int>(rng() % static_cast<uint32_t>(alphabet));
  return v;
}

std::u32string as_u32(const std::vector<int>& v) {
  std::u32string s;
  for (int x : v) s.push_back(static_cast<char32_t>(0x41 + x));
  return s;
}

void expect_lcs_equal(const std::vector<int>& a, const std::vector<int>& b) {
  const size_t want = plain_lcs(a, b);
  EXPECT_EQ(detail::lcs_length(a, b), want) << a.size() << " x " << b.size();
  EXPECT_EQ(detail::lcs_length(b, a), want) << b.size() << " x " << a.size();
  EXPECT_EQ(detail::lcs_length(as_u32(a), as_u32(b)), want) << a.size() << " x " << b.size();
}

// difflib.SequenceMatcher(None, a, b).ratio() transcribed loop for loop from Python's difflib
// (dicts for j2len, every i of a scanned): the definition the fast one must reproduce.
double plain_difflib_ratio(const std::u32string& a, const std::u32string& b) {
  if (a.empty() && b.empty()) return 1.0;
  std::unordered_map<char32_t, std::vector<size_t>> b2j;
  for (size_t j = 0; j < b.size(); ++j) b2j[b[j]].push_back(j);
  if (b.size() >= 200) {
    const size_t ntest = b.size() / 100 + 1;
    for (auto it = b2j.begin(); it != b2j.end();) it = it->second.size() > ntest ? b2j.erase(it) : std::next(it);
  }
  size_t total = 0;
  std::vector<std::array<size_t, 4>> queue = {{0, a.size(), 0, b.size()}};
  while (!queue.empty()) {
    auto [alo, ahi, blo, bhi] = queue.back();
    queue.pop_back();
    size_t besti = alo, bestj = blo, bestsize = 0;
    std::unordered_map<size_t, size_t> j2len, newj2len;
    for (size_t i = alo; i < ahi; ++i) {
      newj2len.clear();
      auto it = b2j.find(a[i]);
      if (it != b2j.end()) {
        for (size_t j : it->second) {
          if (j < blo) continue;
          if (j >= bhi) break;
          auto p = j > 0 ? j2len.find(j - 1) : j2len.end();
          size_t k = newj2len[j] = (p == j2len.end() ? 0 : p->second) + 1;
          if (k > bestsize) {
            besti = i - k + 1;
            bestj = j - k + 1;
            bestsize = k;
          }
        }
      }
      std::swap(j2len, newj2len);
    }
    while (besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1]) {
      --besti;
      --bestj;
      ++bestsize;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] == b[bestj + bestsize]) ++bestsize;
    if (bestsize) {
      total += bestsize;
      if (alo < besti && blo < bestj) queue.push_back({alo, besti, blo, bestj});
      if (besti + bestsize < ahi && bestj + bestsize < bhi)
        queue.push_back({besti + bestsize, ahi, bestj + bestsize, bhi});
    }
  }
  return 2.0 * static_cast<double>(total) / static_cast<double>(a.size() + b.size());
}

// n words "w0".."w<vocab-1>" separated by " ", by ". " after every `sentence`-th word (0: never).
// The same seed gives the same words, so words(20, s) is the first 20 words of words(n, s).
std::string words(size_t n, uint32_t seed, size_t sentence = 0, size_t vocab = 300) {
  std::mt19937 rng(seed);
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (i) s += (sentence && i % sentence == 0) ? ". " : " ";
    s += "w" + std::to_string(rng() % vocab);
  }
  return s;
}

constexpr size_t k200k = 200000;

template <typename Fn>
std::string limit_message(Fn&& fn) {
  try {
    fn();
  } catch (const ScorerLimitError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ScorerLimitError";
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(LcsLength, EqualsPlainTableOnRandomSequences) {
  std::mt19937 rng(31);
  // Word boundaries of the bit row, tiny and large alphabets (dense and scattered match vectors).
  const size_t edges[] = {0, 1, 2, 63, 64, 65, 127, 128, 129, 191, 192, 193};
  for (size_t n : edges) {
    for (size_t m : edges) {
      for (int alphabet : {1, 2, 5, 1000}) expect_lcs_equal(random_ids(rng, n, alphabet), random_ids(rng, m, alphabet));
    }
  }
  for (int trial = 0; trial < 2000; ++trial) {
    const int alphabets[] = {1, 2, 3, 4, 8, 26, 100, 5000};
    const int alphabet = alphabets[rng() % 8];
    expect_lcs_equal(random_ids(rng, rng() % 400, alphabet), random_ids(rng, rng() % 400, alphabet));
  }
  // Long inputs: carries across many words; one symbol frequent (dense vector), the rest rare.
  for (int alphabet : {2, 4, 64, 3000}) expect_lcs_equal(random_ids(rng, 3000, alphabet), random_ids(rng, 2500, alphabet));
  std::vector<int> a = random_ids(rng, 4000, 2000), b = random_ids(rng, 3500, 2000);
  for (size_t i = 0; i < a.size(); i += 2) a[i] = 7;
  for (size_t i = 0; i < b.size(); i += 3) b[i] = 7;
  expect_lcs_equal(a, b);
  // Disjoint alphabets, and one sequence the other's subsequence.
  std::vector<int> c(500, 1), d(700, 2);
  EXPECT_EQ(detail::lcs_length(c, d), 0u);
  std::vector<int> e = random_ids(rng, 1000, 10), sub;
  for (size_t i = 0; i < e.size(); i += 3) sub.push_back(e[i]);
  EXPECT_EQ(detail::lcs_length(e, sub), sub.size());
  EXPECT_EQ(detail::lcs_length_words(200000, 200000), 200000u * 3125u);
  EXPECT_EQ(detail::lcs_length_words(5, 1000), 1000u);
}

TEST(LcsLength, LevenshteinRatioIsTheIndelFormula) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const std::u32string a = as_u32(random_ids(rng, rng() % 300, 1 + static_cast<int>(rng() % 30)));
    const std::u32string b = as_u32(random_ids(rng, rng() % 300, 1 + static_cast<int>(rng() % 30)));
    const size_t lensum = a.size() + b.size();
    if (lensum == 0) continue;
    const size_t dist = lensum - 2 * plain_lcs(a, b);
    EXPECT_EQ(levenshtein_ratio(a, b), static_cast<double>(lensum - dist) / static_cast<double>(lensum));
  }
}

TEST(DifflibRatio, EqualsTheReferenceLoop) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    // Short and >= 200-element b (autojunk), alphabets from 1 to 300 (popular and rare elements).
    const size_t n = rng() % 700, m = rng() % 700;
    const int alphabet = 1 + static_cast<int>(rng() % 300);
    const std::u32string a = as_u32(random_ids(rng, n, alphabet)), b = as_u32(random_ids(rng, m, alphabet));
    EXPECT_EQ(difflib_ratio(a, b), plain_difflib_ratio(a, b)) << n << " x " << m << " alphabet " << alphabet;
  }
  // Texts sharing long runs: matches split the ranges many times.
  for (int trial = 0; trial < 20; ++trial) {
    std::u32string a = as_u32(random_ids(rng, 2000, 150)), b;
    for (size_t i = 0; i < a.size(); ++i) {
      if (rng() % 10 == 0) b.push_back(static_cast<char32_t>(0x41 + rng() % 150));
      if (rng() % 10 != 0) b.push_back(a[i]);
    }
    EXPECT_EQ(difflib_ratio(a, b), plain_difflib_ratio(a, b));
    EXPECT_EQ(difflib_ratio(b, a), plain_difflib_ratio(b, a));
  }
}

TEST(PltrdyRouge, EarlyRecursionErrorFollowsTheDepthRule) {
  // pltrdy_recon_depth_max backtracks every pair; pltrdy_rouge raises before any backtrack when
  // the longest sentences make the error certain. Both must agree with the rule depth > limit.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 400; ++trial) {
    auto text = [&] {
      std::string s;
      const size_t sentences = 1 + rng() % 4;
      for (size_t k = 0; k < sentences; ++k) {
        const size_t n = 1 + rng() % 40;
        for (size_t i = 0; i < n; ++i) s += "w" + std::to_string(rng() % 6) + " ";
        s += ". ";
      }
      return s;
    };
    const std::string hyp = text(), ref = text();
    PltrdyOptions o;
    o.max_recon_depth = 2 + rng() % 50;
    const bool expect_error = pltrdy_recon_depth_max(hyp, ref) > o.max_recon_depth;
    bool raised = false;
    try {
      pltrdy_rouge(hyp, ref, o);
    } catch (const PltrdyError& e) {
      raised = e.kind() == PltrdyError::Kind::Recursion;
    }
    EXPECT_EQ(raised, expect_error) << o.max_recon_depth << "\n" << hyp << "\n" << ref;
  }
}

// Google rougeL on 200,000-word texts whose LCS is known: the prediction is the reference with
// every 10th word dropped and a word absent from the reference after every 7th kept one, so the
// LCS is exactly the 180,000 kept words.
TEST(LongInputs, RougeL200kWordsExact) {
  std::mt19937 rng(200);
  std::string ref, pred;
  size_t kept = 0, pred_words = 0;
  for (size_t i = 0; i < k200k; ++i) {
    const std::string w = "w" + std::to_string(rng() % 300);
    ref += w + " ";
    if (i % 10 == 9) continue;
    pred += w + " ";
    ++kept;
    ++pred_words;
    if (kept % 7 == 0) {
      pred += "x" + std::to_string(kept) + " ";
      ++pred_words;
    }
  }
  ASSERT_EQ(kept, 180000u);
  const RougeScore s = RougeScorer({"rougeL"}).score(ref, pred).at("rougeL");
  const double p = 180000.0 / static_cast<double>(pred_words), r = 180000.0 / 200000.0;
  EXPECT_EQ(s.precision, p);
  EXPECT_EQ(s.recall, r);
  EXPECT_EQ(s.fmeasure, rouge_fmeasure(p, r));
}

TEST(LongInputs, RougeLsum200kWordsStatedBound) {
  const std::string ref = words(k200k, 1), pred = words(k200k, 2);
  // One line each: a 200,000 x 200,000 table; in 20-word lines the pairs sum to as much.
  std::string msg = limit_message([&] { RougeScorer({"rougeLsum"}).score(ref, pred); });
  EXPECT_TRUE(contains(msg, "rouge_score rougeLsum: 200000 tokens in 1 lines x 200000 tokens in 1 lines need "
                            "40000400001 LCS table cells, over the limit of 500000000"))
      << msg;
  std::string lines_ref = ref;  // 10,000 lines of 20 words
  for (size_t i = 0, n = 0; i < lines_ref.size(); ++i) {
    if (lines_ref[i] == ' ' && ++n % 20 == 0) lines_ref[i] = '\n';
  }
  msg = limit_message([&] { RougeScorer({"rouge1", "rougeLsum"}).score_multi({lines_ref, "a"}, pred); });
  EXPECT_TRUE(contains(msg, "200000 tokens in 10000 lines x 200000 tokens in 1 lines")) << msg;
  // Under the bound it is the reference's algorithm: 200,000 words against a 20-word summary.
  const RougeScore small = RougeScorer({"rougeLsum"}).score(lines_ref, words(20, 1)).at("rougeLsum");
  EXPECT_EQ(small.precision, 1.0);  // the summary is the reference's first line
  EXPECT_EQ(small.recall, 20.0 / 200000.0);
}

TEST(LongInputs, Pltrdy200kWords) {
  const std::string ref = words(k200k, 1), pred = words(k200k, 2);
  // One 200,000-word sentence each: the reference's RecursionError, raised before any table.
  try {
    pltrdy_rouge(pred, ref);
    ADD_FAILURE() << "no RecursionError";
  } catch (const PltrdyError& e) {
    EXPECT_EQ(e.kind(), PltrdyError::Kind::Recursion);
  }
  EXPECT_EQ(lb_rouge_score(pred, ref), 0.0);  // LongBench's bare except
  // Without the recursion rule the table is the stated bound.
  PltrdyOptions unlimited;
  unlimited.max_recon_depth = 0;
  std::string msg = limit_message([&] { pltrdy_rouge(pred, ref, unlimited); });
  EXPECT_TRUE(contains(msg, "pltrdy rouge-l: reference 200000 words in 1 sentences x hypothesis 200000 words in 1 "
                            "sentences need 40000400001 LCS table cells, over the limit of 500000000"))
      << msg;
  // 20-word sentences: no pair reaches the recursion limit, 10,000 x 10,000 pairs pass the bound;
  // LongBench does not turn kvbench's bound into a 0.0.
  const std::string ref_s = words(k200k, 1, 20), pred_s = words(k200k, 2, 20);
  msg = limit_message([&] { pltrdy_rouge(pred_s, ref_s); });
  EXPECT_TRUE(contains(msg, "reference 200000 words in 10000 sentences x hypothesis 200000 words in 10000 sentences"))
      << msg;
  EXPECT_THROW(lb_rouge_score(pred_s, ref_s), ScorerLimitError);
  // Under the bound it is the reference's algorithm: a 40-word summary that is the first two
  // sentences of the 200,000-word reference has each sentence as its own LCS, so the union holds
  // every unique summary word (p = 1) and recall is that count over the reference's unique words.
  const std::string summary = words(40, 1, 20);
  const PltrdyScores ok = pltrdy_rouge(summary, ref_s);
  EXPECT_EQ(ok.rougel.p, 1.0);
  const auto unique = [](const std::string& t) {
    std::vector<std::string> w = python_split_ws(t);
    for (auto& x : w) x.erase(std::remove(x.begin(), x.end(), '.'), x.end());
    std::sort(w.begin(), w.end());
    return static_cast<double>(std::unique(w.begin(), w.end()) - w.begin());
  };
  EXPECT_EQ(ok.rougel.r, unique(summary) / unique(ref_s));
}

TEST(LongInputs, CodeSim200kWords) {
  const std::string ref = words(k200k, 1), pred = words(k200k, 2);
  const std::u32string a = utf8_decode(pred), b = utf8_decode(ref);
  // python-Levenshtein: ~1M x ~1M code points, refused before any work.
  std::string msg = limit_message([&] { lb_code_sim_score(pred, ref); });
  EXPECT_TRUE(contains(msg, "fuzz.ratio (python-Levenshtein): " + std::to_string(a.size()) + " x " +
                                std::to_string(b.size()) + " code points need"))
      << msg;
  EXPECT_TRUE(contains(msg, "over the limit of 2000000000")) << msg;
  // difflib: every character of "w<digits> " is popular (> 1% of b), so b2j is empty and the
  // matching blocks are the common prefix alone: ratio = 2 * prefix / (|a| + |b|), exactly.
  size_t prefix = 0;
  while (prefix < std::min(a.size(), b.size()) && a[prefix] == b[prefix]) ++prefix;
  EXPECT_EQ(difflib_ratio(a, b), 2.0 * static_cast<double>(prefix) / static_cast<double>(a.size() + b.size()));
  const double r = 2.0 * static_cast<double>(prefix) / static_cast<double>(a.size() + b.size());
  EXPECT_EQ(lb_code_sim_score(pred, ref, FuzzBackend::Difflib), static_cast<int>(std::nearbyint(100 * r)) / 100.0);
  // difflib on 150 symbols each under 1% of b: every element of a seeds ~b/150 positions, so the
  // first call alone needs 600,000 * (1 + ~4,000) steps: refused before it starts.
  std::mt19937 rng(9);
  std::u32string x, y;
  for (size_t i = 0; i < 600000; ++i) x.push_back(static_cast<char32_t>(0x4e00 + rng() % 150));
  for (size_t i = 0; i < 600000; ++i) y.push_back(static_cast<char32_t>(0x4e00 + rng() % 150));
  msg = limit_message([&] { difflib_ratio(x, y); });
  EXPECT_TRUE(contains(msg, "fuzz.ratio (difflib): 600000 x 600000 code points need")) << msg;
  EXPECT_TRUE(contains(msg, "or more SequenceMatcher steps, over the limit of 100000000")) << msg;
  // A cheap first call but quadratic recursion: a = 1 2 3 ... n, b = the odd elements then the
  // even ones. Every call's longest match is one element at its start, so each call rescans the
  // rest of a: ~n^2/4 = 4e8 steps, stopped by the count once past 1e8.
  std::u32string p, q;
  for (char32_t c = 0; c < 40000; ++c) p.push_back(0x10000 + c);
  for (size_t i = 0; i < p.size(); i += 2) q.push_back(p[i]);
  for (size_t i = 1; i < p.size(); i += 2) q.push_back(p[i]);
  msg = limit_message([&] { difflib_ratio(p, q); });
  EXPECT_TRUE(contains(msg, "fuzz.ratio (difflib): 40000 x 40000 code points need 1000")) << msg;
  // The same shape under the bound gives the reference loop's number.
  const std::u32string p2 = p.substr(0, 2000);
  std::u32string q2;
  for (size_t i = 0; i < p2.size(); i += 2) q2.push_back(p2[i]);
  for (size_t i = 1; i < p2.size(); i += 2) q2.push_back(p2[i]);
  EXPECT_EQ(difflib_ratio(p2, q2), plain_difflib_ratio(p2, q2));
  // Levenshtein under the bound, with a known LCS: y2 is x2 with every 5th code point dropped and
  // one absent from x2 inserted after every 3rd kept one.
  std::u32string x2 = x.substr(0, 60000), y2;
  size_t kept = 0;
  for (size_t i = 0; i < x2.size(); ++i) {
    if (i % 5 == 4) continue;
    y2.push_back(x2[i]);
    if (++kept % 3 == 0) y2.push_back(U'#');
  }
  const size_t lensum = x2.size() + y2.size();
  EXPECT_EQ(levenshtein_ratio(x2, y2), static_cast<double>(2 * kept) / static_cast<double>(lensum));
}
