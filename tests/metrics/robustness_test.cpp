// Robustness of every scorer: empty, whitespace-only, non-ASCII, very long inputs, many
// references; and the bounded-memory LCS backtrack against a plain full-table one.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "metrics/lcs_backtrack.hpp"
#include "metrics/longbench_metrics.hpp"
#include "metrics/qa.hpp"
#include "metrics/rouge_pltrdy.hpp"
#include "metrics/rouge_score.hpp"

using namespace kvbench::metrics;

namespace {

std::string random_words(size_t n, uint32_t seed, size_t vocab = 300, bool periods = true) {
  std::mt19937 rng(seed);
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += "w" + std::to_string(rng() % vocab);
    s += (periods && i % 20 == 19) ? ". " : " ";
  }
  return s;
}

bool sane(double x) { return std::isfinite(x) && x >= 0.0 && x <= 1.0; }

void expect_sane(const std::map<std::string, RougeScore>& m) {
  for (const auto& [k, s] : m) {
    EXPECT_TRUE(sane(s.precision) && sane(s.recall) && sane(s.fmeasure)) << k;
  }
}

// Plain full-table backtrack, the definition the bounded-memory one must reproduce.
detail::LcsPath naive(const std::vector<int>& x, const std::vector<int>& y, detail::LcsTie tie) {
  size_t w = y.size() + 1;
  std::vector<int> t((x.size() + 1) * w, 0);
  for (size_t i = 1; i <= x.size(); ++i)
    for (size_t j = 1; j <= y.size(); ++j)
      t[i * w + j] = x[i - 1] == y[j - 1] ? t[(i - 1) * w + j - 1] + 1 : std::max(t[(i - 1) * w + j], t[i * w + j - 1]);
  detail::LcsPath p;
  size_t i = x.size(), j = y.size();
  while (i > 0 && j > 0) {
    ++p.steps;
    int up = t[(i - 1) * w + j], left = t[i * w + j - 1];
    if (x[i - 1] == y[j - 1]) {
      p.x_indices.push_back(--i);
      --j;
    } else if (tie == detail::LcsTie::kGoogle ? !(left > up) : (up > left)) {
      --i;
    } else {
      --j;
    }
  }
  return p;
}

}  // namespace

TEST(LcsBacktrack, CheckpointedEqualsFullTable) {
  std::mt19937 rng(7);
  // Both orientations (the longer sequence is stored down the rows), whole and checkpointed
  // tables (> 4M cells), and very unequal lengths.
  for (auto dims : {std::pair<size_t, size_t>{3000, 2000}, {40, 30}, {2500, 1700}, {2000, 3000}, {30, 40},
                    {1700, 2500}, {3, 1500000}, {1500000, 3}}) {
    std::vector<int> x(dims.first), y(dims.second);
    for (auto& v : x) v = static_cast<int>(rng() % 5);
    for (auto& v : y) v = static_cast<int>(rng() % 5);
    for (auto tie : {detail::LcsTie::kGoogle, detail::LcsTie::kPltrdy}) {
      auto a = detail::lcs_backtrack(x, y, tie);
      auto b = naive(x, y, tie);
      EXPECT_EQ(a.x_indices, b.x_indices);
      EXPECT_EQ(a.steps, b.steps);
    }
  }
}

TEST(Robustness, EmptyAndWhitespace) {
  RougeScorer scorer({"rouge1", "rouge2", "rougeL", "rougeLsum"}, true);
  for (const char* a : {"", " ", "\n\n", "\t \u3000", "...", "!!!"}) {
    for (const char* b : {"", "x", "a b c", "\n"}) {
      auto s = scorer.score(a, b);
      expect_sane(s);
      EXPECT_EQ(s["rouge1"].fmeasure, 0.0);
      EXPECT_TRUE(sane(lb_rouge_score(a, b)));
      EXPECT_TRUE(sane(lb_qa_f1_score(a, b)));
      EXPECT_TRUE(sane(lb_code_sim_score(a, b)));
      EXPECT_TRUE(sane(lb_count_score(a, b)));
      EXPECT_TRUE(sane(best_subspan_em(a, {b})));
      EXPECT_TRUE(sane(lb_classification_score(a, b, {"x", ""})));
    }
  }
  EXPECT_EQ(lb_rouge_score("", "reference"), 0.0);  // ValueError -> 0.0
  EXPECT_EQ(lb_rouge_score("   ", "a"), 0.0);        // sentence "" shares nothing
}

TEST(Robustness, NonAscii) {
  const char* texts[] = {"你好，世界。这是一个测试。", "Ünïcödé façade naïve café", "😀🎉 emoji only",
                         "ΣΊΣΥΦΟΣ ΣΑΣ", "\xff\xfe invalid bytes", "مرحبا بالعالم", "İstanbul'da"};
  RougeScorer scorer({"rouge1", "rougeL", "rougeLsum"}, true);
  for (const char* a : texts) {
    for (const char* b : texts) {
      expect_sane(scorer.score(a, b));
      EXPECT_TRUE(sane(lb_rouge_score(a, b)));
      EXPECT_TRUE(sane(lb_qa_f1_score(a, b)));
      EXPECT_TRUE(sane(lb_code_sim_score(a, b, FuzzBackend::Difflib)));
      EXPECT_TRUE(sane(lb_code_sim_score(a, b, FuzzBackend::Levenshtein)));
    }
    EXPECT_EQ(exact_match(a, {a}), 1.0);
  }
  // Final sigma: Python lowercases the last Σ of a word to ς.
  EXPECT_EQ(normalize_answer("ΣΊΣΥΦΟΣ"), "σίσυφος");
  EXPECT_TRUE(rouge_tokenize("你好世界", true).empty());
}

TEST(Robustness, TenThousandWords) {
  std::string pred = random_words(10000, 1), ref = random_words(10000, 2);
  std::string pred_one_line = random_words(10000, 3, 300, false);
  RougeScorer scorer({"rouge1", "rouge2", "rougeL", "rougeLsum"}, true);
  auto s = scorer.score(ref, pred);
  expect_sane(s);
  EXPECT_GT(s["rouge1"].fmeasure, 0.5);  // same vocabulary
  expect_sane(scorer.score(ref, pred_one_line));
  // pltrdy: 20-word sentences are fine; one 10k-word sentence needs > 1000 frames.
  auto p = pltrdy_rouge(pred, ref);
  EXPECT_TRUE(sane(p.rougel.f) && sane(p.rouge1.f) && sane(p.rouge2.f));
  EXPECT_THROW(pltrdy_rouge(pred_one_line, ref), PltrdyError);
  EXPECT_EQ(lb_rouge_score(pred_one_line, ref), 0.0);
  EXPECT_TRUE(sane(lb_qa_f1_score(pred, ref)));
  EXPECT_TRUE(sane(best_subspan_em(pred, {ref})));
  std::string code = pred.substr(0, 3000);
  EXPECT_TRUE(sane(lb_code_sim_score(code, ref.substr(0, 3000), FuzzBackend::Difflib)));
  EXPECT_TRUE(sane(lb_code_sim_score(code, ref.substr(0, 3000), FuzzBackend::Levenshtein)));
}

TEST(Robustness, ManyReferences) {
  std::vector<std::string> refs;
  for (uint32_t i = 0; i < 300; ++i) refs.push_back(random_words(30, 100 + i, 50));
  refs.push_back("");
  std::string pred = random_words(40, 99, 50);
  RougeScorer scorer({"rouge1", "rougeL"}, false);
  auto multi = scorer.score_multi(refs, pred);
  expect_sane(multi);
  double best = 0.0;
  for (const auto& r : refs) best = std::max(best, scorer.score(r, pred)["rouge1"].fmeasure);
  EXPECT_EQ(multi["rouge1"].fmeasure, best);
  EXPECT_TRUE(sane(token_f1(pred, refs)));
  EXPECT_TRUE(sane(exact_match(pred, refs)));
  EXPECT_EQ(best_subspan_em(pred, refs), 1.0);  // "" normalizes to "", always a substring
  std::vector<std::vector<std::string>> answers(20, refs);
  std::vector<std::string> preds(20, pred);
  auto agg = lb_scorer("multi_news", preds, answers, {});
  EXPECT_TRUE(agg.score >= 0.0 && agg.score <= 100.0);
}
