// Robustness of sacreBLEU BLEU, nltk BLEU / Self-BLEU and METEOR: empty and whitespace-only
// text, non-ASCII text, 10k-word inputs, many references. Each must return a finite number in
// range (or the documented std::invalid_argument), quickly, and agree with simple invariants.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "metrics/aggregate.hpp"
#include "metrics/bleu.hpp"
#include "metrics/bleu_nltk.hpp"
#include "metrics/meteor.hpp"
#include "metrics/self_bleu.hpp"
#include "metrics/unicode.hpp"
#include "metrics/wordnet.hpp"

using namespace kvbench::metrics;

namespace {

// Inflected English words, so the stem and WordNet stages of METEOR have work to do.
const std::vector<std::string> kVocab = {
    "the",    "dogs",    "running", "houses",  "went",   "better",   "children", "quickly", "analyses", "wolves",
    "women",  "studies", "denied",  "hardest", "cities", "churches", "boxes",    "buzzes",  "flies",    "makes",
    "making", "made",    "geese",   "mice",    "are",    "is",       "was",      "been",    "of",       "and",
    "Paris",  "café",    "naïve",   "İstanbul", "北京",   "😀",       "co-op",    "don't",   "U.S.",     "3.5%"};

std::string text(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (i) s += (i % 17 == 0) ? ". " : " ";
    s += kVocab[rng() % kVocab.size()];
  }
  return s;
}

// Up to a few ulp above the maximum: BLEU's exp(mean(log p)) of four 100s is 100.00000000000004
// in sacreBLEU too (the same libm calls in the same order).
bool in_range(double x, double hi) { return std::isfinite(x) && x >= 0.0 && x <= hi * (1 + 1e-14); }


}  // namespace

TEST(RobustnessScorers, EmptyWhitespaceAndNonAscii) {
  const std::vector<std::string> odd = {"",   " ",  "\n\n", "\t \u3000\u00a0", "...", "!!!", "北京是中国的首都。",
                                        "😀😁😂", "İSTANBUL ﬁnal ＡＢＣ １２３", "a\u200bb", "\xff\xfe broken utf8"};
  for (const auto& a : odd) {
    for (const auto& b : odd) {
      for (const char* tok : {"13a", "intl", "none"}) {
        BleuOptions o = BleuOptions::sentence();
        o.tokenize = tok;
        for (const char* smooth : {"exp", "floor", "add-k", "none"}) {
          o.smooth_method = smooth;
          const BleuScore s = sentence_bleu(a, {b, a}, o);
          EXPECT_TRUE(in_range(s.score, 100.0)) << tok << " " << smooth << " [" << a << "] [" << b << "]";
          EXPECT_TRUE(in_range(s.bp, 1.0)) << s.bp << " " << s.sys_len << " " << s.ref_len;
        }
      }
      EXPECT_TRUE(in_range(meteor_score(a, {b}), 1.0)) << "[" << a << "] [" << b << "]";
      EXPECT_TRUE(in_range(self_bleu({a, b, "x y z"}).mean, 1.0));
    }
  }
  // Identical non-empty text scores the maximum where the metric has one.
  EXPECT_DOUBLE_EQ(sentence_bleu("北京 是 中国 的 首都 。", {"北京 是 中国 的 首都 。"}).score, 100.0);
  EXPECT_EQ(corpus_bleu({"", ""}, {{"", ""}}).score, 0.0);
  EXPECT_EQ(meteor_score(" \t ", {"a"}), 0.0);
}

TEST(RobustnessScorers, TenThousandWordsAndManyReferences) {
  const std::string hyp = text(10000, 1), ref = text(10000, 2);
  const BleuScore b = sentence_bleu(hyp, {ref});
  EXPECT_TRUE(in_range(b.score, 100.0));
  EXPECT_GT(b.counts[0], 0);
  BleuOptions intl = BleuOptions::sentence();
  intl.tokenize = "intl";
  EXPECT_TRUE(in_range(sentence_bleu(hyp, {ref}, intl).score, 100.0));
  EXPECT_DOUBLE_EQ(sentence_bleu(hyp, {hyp}).score, 100.0);
  const double m = meteor_score(hyp, {ref});
  EXPECT_TRUE(in_range(m, 1.0));
  EXPECT_GT(m, 0.3);  // same 40-word vocabulary: most words align, fragmentation costs the rest
  const std::vector<std::string> long_tokens = python_split_ws(hyp);
  EXPECT_TRUE(in_range(nltk_sentence_bleu({python_split_ws(ref)}, long_tokens), 1.0));

  // 200 references: the closest length wins and the max counts are over all of them.
  std::vector<std::string> refs;
  for (uint32_t k = 0; k < 200; ++k) refs.push_back(text(20 + k % 7, 100 + k));
  const std::string short_hyp = text(22, 7);
  const BleuScore many = sentence_bleu(short_hyp, refs);
  EXPECT_TRUE(in_range(many.score, 100.0));
  refs.push_back(short_hyp);
  EXPECT_DOUBLE_EQ(sentence_bleu(short_hyp, refs).score, 100.0);
  EXPECT_EQ(meteor_score(short_hyp, refs), meteor_score(short_hyp, {short_hyp}));
  std::vector<std::string> set(refs.begin(), refs.begin() + 60);
  EXPECT_TRUE(in_range(self_bleu(set, 3).mean_numpy, 1.0));
}

// nltk's morphy applies its suffix rules again to every result; a long word made of suffixes
// ("eseses...") would branch exponentially without the de-duplication (which changes no result).
TEST(RobustnessScorers, MorphyOnPathologicalWords) {
  const WordNet& wn = WordNet::instance();
  std::string w;
  for (int i = 0; i < 400; ++i) w += "es";
  for (char pos : WordNet::kPosList) {
    for (const auto& form : wn.morphy(w, pos)) EXPECT_TRUE(wn.in_index(form, pos)) << form;
  }
  EXPECT_TRUE(wn.morphy(w, 'n').size() <= 2);  // only short remnants such as "e" are words
  wn.synonyms(w + "ing");
  EXPECT_TRUE(in_range(meteor_score(w + " " + w + "ed", {w + "s"}), 1.0));
}

TEST(RobustnessScorers, AggregatesOnLargeInputs) {
  std::vector<int64_t> a, b;
  for (int64_t i = 0; i < 100000; ++i) {
    a.push_back(i * 2);
    b.push_back(i * 3);
  }
  // |A ∩ B| = multiples of 6 below 200000 = 33334; |A ∪ B| = 100000 + 100000 - 33334.
  EXPECT_DOUBLE_EQ(jaccard(a, b), 33334.0 / 166666.0);
  EXPECT_DOUBLE_EQ(coverage({a, b}, 300000), 166666.0 / 300000.0);
  std::vector<double> nll(1000000, 0.5);
  EXPECT_DOUBLE_EQ(perplexity_from_nll(nll).perplexity, std::exp(0.5));
}
