// Google rouge_score parity over every case of golden/rouge_score.json (stemmer on and off):
// tokens, per-reference rouge1/2/L/Lsum P/R/F and score_multi, all bit for bit.
#include <iomanip>

#include "golden.hpp"
#include "metrics/rouge_score.hpp"

using namespace kvbench::metrics;
using kvbench::test::load_golden;

namespace {

const char* kTypes[] = {"rouge1", "rouge2", "rougeL", "rougeLsum"};

void expect_score(const RougeScore& got, const nlohmann::json& want, const std::string& ctx,
                  int& compared) {
  EXPECT_BITS_EQ(got.precision, want.at("precision").get<double>(), ctx + " precision");
  EXPECT_BITS_EQ(got.recall, want.at("recall").get<double>(), ctx + " recall");
  EXPECT_BITS_EQ(got.fmeasure, want.at("fmeasure").get<double>(), ctx + " fmeasure");
  compared += 3;
}

}  // namespace

TEST(RougeScoreGolden, EveryCaseBitExact) {
  auto golden = load_golden("rouge_score.json");
  const auto& cases = golden.at("cases");
  ASSERT_EQ(cases.size(), golden.at("n_cases").get<size_t>());
  ASSERT_GE(cases.size(), 285u);
  int compared = 0, token_lists = 0;
  for (bool stem : {true, false}) {
    RougeScorer scorer({"rouge1", "rouge2", "rougeL", "rougeLsum"}, stem);
    for (const auto& c : cases) {
      const auto& v = c.at(stem ? "use_stemmer_true" : "use_stemmer_false");
      std::string id = c.at("id").get<std::string>() + (stem ? " [stem]" : " [nostem]");
      std::string pred = c.at("prediction");
      auto refs = c.at("references").get<std::vector<std::string>>();
      EXPECT_EQ(rouge_tokenize(pred, stem), v.at("prediction_tokens").get<std::vector<std::string>>())
          << id;
      ++token_lists;
      const auto& per_ref = v.at("per_reference");
      ASSERT_EQ(per_ref.size(), refs.size()) << id;
      for (size_t j = 0; j < refs.size(); ++j) {
        auto got = scorer.score(refs[j], pred);
        for (const char* t : kTypes) {
          expect_score(got.at(t), per_ref[j].at(t), id + " ref " + std::to_string(j) + " " + t,
                       compared);
        }
      }
      auto multi = scorer.score_multi(refs, pred);
      for (const char* t : kTypes) {
        expect_score(multi.at(t), v.at("score_multi").at(t), id + " score_multi " + t, compared);
      }
    }
  }
  std::cout << "[rouge_score] " << cases.size() << " cases x 2 stemmer modes, " << token_lists
            << " token lists, " << compared << " numbers compared bit for bit\n";
}

TEST(RougeScore, ReadmeExample) {
  // The rouge_score README: rouge1 P/R/F = 0.75/0.6667/0.70588 for this pair.
  RougeScorer scorer({"rouge1", "rougeL"}, true);
  auto s = scorer.score("The quick brown fox jumps over the lazy dog", "The quick brown dog jumps on the log.");
  EXPECT_DOUBLE_EQ(s["rouge1"].precision, 0.75);
  EXPECT_DOUBLE_EQ(s["rouge1"].recall, 6.0 / 9.0);
  EXPECT_DOUBLE_EQ(s["rougeL"].precision, 0.625);
}

TEST(RougeScore, ClippedCountsByHand) {
  auto s = rouge_n(rouge_tokenize("the cat sat on the mat", false),
                   rouge_tokenize("the the the the the cat cat", false), 1);
  EXPECT_DOUBLE_EQ(s.precision, 3.0 / 7.0);
  EXPECT_DOUBLE_EQ(s.recall, 0.5);
  EXPECT_DOUBLE_EQ(s.fmeasure, 6.0 / 13.0);
}

TEST(RougeScore, UnicodeTokenizer) {
  // İ lowercases to i + U+0307: token "i" then "stanbul"; Kelvin sign -> k; ß splits; CJK drops.
  EXPECT_EQ(rouge_tokenize("İstanbul", false), (std::vector<std::string>{"i", "stanbul"}));
  EXPECT_EQ(rouge_tokenize("\u212Aelvin", false), (std::vector<std::string>{"kelvin"}));
  EXPECT_EQ(rouge_tokenize("straße", false), (std::vector<std::string>{"stra", "e"}));
  EXPECT_TRUE(rouge_tokenize("你好世界 😀", true).empty());
  EXPECT_EQ(rouge_tokenize("Running dogs ran", true),
            (std::vector<std::string>{"run", "dog", "ran"}));
}

TEST(RougeScore, ScoreMultiTakesWholeScoreOfArgmax) {
  RougeScorer scorer({"rouge1"}, false);
  auto m = scorer.score_multi({"a b c d", "a x"}, "a b");
  auto s0 = scorer.score("a b c d", "a b")["rouge1"];
  auto s1 = scorer.score("a x", "a b")["rouge1"];
  const auto& best = s0.fmeasure >= s1.fmeasure ? s0 : s1;
  EXPECT_EQ(m["rouge1"].precision, best.precision);
  EXPECT_EQ(m["rouge1"].recall, best.recall);
  EXPECT_THROW(scorer.score_multi({}, "a"), std::invalid_argument);
}

TEST(RougeScore, MeanAggregation) {
  std::vector<std::map<std::string, RougeScore>> v = {{{"rouge1", {1.0, 0.5, 0.25}}},
                                                      {{"rouge1", {0.0, 0.5, 0.75}}}};
  auto m = rouge_mean(v);
  EXPECT_EQ(m["rouge1"].precision, 0.5);
  EXPECT_EQ(m["rouge1"].recall, 0.5);
  EXPECT_EQ(m["rouge1"].fmeasure, 0.5);
  EXPECT_TRUE(rouge_mean({}).empty());
}
