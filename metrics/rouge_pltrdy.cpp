#include "metrics/rouge_pltrdy.hpp"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "metrics/lcs_backtrack.hpp"
#include "metrics/scorer_limits.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {

std::vector<std::string> pltrdy_sentences(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t dot = text.find('.', start);
    std::string piece = text.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!piece.empty()) out.push_back(python_collapse_ws(piece));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

namespace {

using Ids = std::vector<int>;

struct Vocab {
  std::unordered_map<std::string, int> ids;
  // sentence.split(" "): "" gives [""], "a b" gives ["a", "b"] (no empty pieces otherwise,
  // since sentences are whitespace-collapsed).
  Ids words(const std::string& sentence) {
    Ids out;
    size_t start = 0;
    while (true) {
      size_t sp = sentence.find(' ', start);
      std::string w = sentence.substr(start, sp == std::string::npos ? std::string::npos : sp - start);
      out.push_back(ids.emplace(std::move(w), static_cast<int>(ids.size())).first->second);
      if (sp == std::string::npos) break;
      start = sp + 1;
    }
    return out;
  }
};

struct Prepared {
  Vocab vocab;
  std::vector<Ids> hyp, ref;
};

Prepared prepare(const std::string& hypothesis, const std::string& reference) {
  Prepared p;
  for (const auto& s : pltrdy_sentences(hypothesis)) p.hyp.push_back(p.vocab.words(s));
  for (const auto& s : pltrdy_sentences(reference)) p.ref.push_back(p.vocab.words(s));
  return p;
}

// Unique n-grams (n = 1 or 2) of the concatenated words, each packed into 64 bits.
std::unordered_set<uint64_t> ngram_set(const std::vector<Ids>& sentences, size_t n) {
  Ids all;
  for (const auto& s : sentences) all.insert(all.end(), s.begin(), s.end());
  std::unordered_set<uint64_t> out;
  for (size_t i = 0; i + n <= all.size(); ++i) {
    uint64_t key = static_cast<uint32_t>(all[i]);
    if (n == 2) key = (key << 32) | static_cast<uint32_t>(all[i + 1]);
    out.insert(key);
  }
  return out;
}

PltrdyPRF rouge_n_sets(const std::vector<Ids>& hyp, const std::vector<Ids>& ref, size_t n) {
  auto h = ngram_set(hyp, n);
  auto r = ngram_set(ref, n);
  size_t overlap = 0;
  for (uint64_t g : h) overlap += r.count(g);
  PltrdyPRF s;
  s.p = h.empty() ? 0.0 : static_cast<double>(overlap) / static_cast<double>(h.size());
  s.r = r.empty() ? 0.0 : static_cast<double>(overlap) / static_cast<double>(r.size());
  s.f = 2.0 * ((s.p * s.r) / (s.p + s.r + 1e-8));
  return s;
}

struct Recon {
  std::vector<int> words;  // the LCS words (order irrelevant: they go into a set)
  size_t depth = 0;        // _recon frames needed: backtrack steps + 1
};

// pltrdy's _recon_lcs(x=reference words, y=hypothesis words): the recursive `_recon` takes, at
// every step, the branch lcs_backtrack's kPltrdy rule takes; one frame per step plus the last.
Recon recon_lcs(const Ids& x, const Ids& y) {
  detail::LcsPath path = detail::lcs_backtrack(x, y, detail::LcsTie::kPltrdy);
  Recon out;
  out.depth = path.steps + 1;
  for (size_t i : path.x_indices) out.words.push_back(x[i]);
  return out;
}

// The summary-level rouge-l backtracks every (reference sentence, hypothesis sentence) table:
// refuses more than kMaxLcsTableCells cells in all before starting.
void check_table_cells(const std::vector<Ids>& hyp, const std::vector<Ids>& ref, const char* scorer) {
  uint64_t hyp_words = 0, ref_words = 0;
  for (const auto& s : hyp) hyp_words += s.size();
  for (const auto& s : ref) ref_words += s.size();
  const uint64_t cells = detail::mul_saturating(ref_words + ref.size(), hyp_words + hyp.size());
  if (cells > kMaxLcsTableCells) {
    throw ScorerLimitError(scorer_limit_message(
        scorer,
        "reference " + std::to_string(ref_words) + " words in " + std::to_string(ref.size()) + " sentences x hypothesis " +
            std::to_string(hyp_words) + " words in " + std::to_string(hyp.size()) + " sentences",
        cells, "LCS table cells", kMaxLcsTableCells));
  }
}

size_t longest(const std::vector<Ids>& sentences) {
  size_t n = 0;
  for (const auto& s : sentences) n = std::max(n, s.size());
  return n;
}

PltrdyPRF rouge_l_summary(const std::vector<Ids>& hyp, const std::vector<Ids>& ref,
                          size_t max_depth) {
  // A backtrack ends when i or j reaches 0 and each step lowers each by at most 1, so a pair of
  // sentences with i and j words needs >= min(i, j) + 1 frames. When the longest reference
  // sentence and the longest hypothesis sentence both have max_depth words or more, the loop
  // below is certain to raise on their pair: raising first is the same result without filling
  // any table (two single-sentence 200,000-word texts would need 4e10 cells).
  if (max_depth != 0 && std::min(longest(ref), longest(hyp)) + 1 > max_depth) {
    throw PltrdyError(PltrdyError::Kind::Recursion, "RecursionError: maximum recursion depth exceeded");
  }
  check_table_cells(hyp, ref, "pltrdy rouge-l");
  std::unordered_set<int> ref_words, hyp_words;
  for (const auto& s : ref) ref_words.insert(s.begin(), s.end());
  for (const auto& s : hyp) hyp_words.insert(s.begin(), s.end());
  auto m = static_cast<double>(ref_words.size());
  auto n = static_cast<double>(hyp_words.size());
  std::unordered_set<int> uni;
  long long llcs = 0;
  for (const auto& r : ref) {
    size_t before = uni.size();
    for (const auto& h : hyp) {
      Recon rc = recon_lcs(r, h);
      if (max_depth != 0 && rc.depth > max_depth) {
        throw PltrdyError(PltrdyError::Kind::Recursion,
                          "RecursionError: maximum recursion depth exceeded");
      }
      uni.insert(rc.words.begin(), rc.words.end());
    }
    llcs += static_cast<long long>(uni.size() - before);
  }
  PltrdyPRF s;
  s.r = static_cast<double>(llcs) / m;
  s.p = static_cast<double>(llcs) / n;
  s.f = 2.0 * ((s.p * s.r) / (s.p + s.r + 1e-8));
  return s;
}

}  // namespace

PltrdyScores pltrdy_rouge(const std::string& hypothesis, const std::string& reference,
                          const PltrdyOptions& options) {
  Prepared p = prepare(hypothesis, reference);
  if (p.hyp.empty()) throw PltrdyError(PltrdyError::Kind::HypothesisEmpty, "ValueError: Hypothesis is empty.");
  if (p.ref.empty()) throw PltrdyError(PltrdyError::Kind::ReferenceEmpty, "ValueError: Reference is empty.");
  PltrdyScores s;
  s.rouge1 = rouge_n_sets(p.hyp, p.ref, 1);
  s.rouge2 = rouge_n_sets(p.hyp, p.ref, 2);
  s.rougel = rouge_l_summary(p.hyp, p.ref, options.max_recon_depth);
  return s;
}

size_t pltrdy_recon_depth_max(const std::string& hypothesis, const std::string& reference) {
  Prepared p = prepare(hypothesis, reference);
  check_table_cells(p.hyp, p.ref, "pltrdy_recon_depth_max");
  size_t depth = 0;
  for (const auto& r : p.ref) {
    for (const auto& h : p.hyp) depth = std::max(depth, recon_lcs(r, h).depth);
  }
  return depth;
}

}  // namespace kvbench::metrics
