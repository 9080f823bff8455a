// pltrdy rouge parity over every case x reference of golden/rouge_pltrdy.json: r/p/f bit for
// bit, the exact error for the error entries, the sentence split and recon_depth_max.
#include <iomanip>

#include "golden.hpp"
#include "metrics/rouge_pltrdy.hpp"

using namespace kvbench::metrics;
using kvbench::test::load_golden;

TEST(RougePltrdyGolden, EveryCaseBitExact) {
  auto golden = load_golden("rouge_pltrdy.json");
  const auto& cases = golden.at("cases");
  ASSERT_GE(cases.size(), 285u);
  int entries = 0, errors = 0, compared = 0;
  for (const auto& c : cases) {
    std::string id = c.at("id");
    std::string pred = c.at("prediction");
    auto refs = c.at("references").get<std::vector<std::string>>();
    const auto& per_ref = c.at("per_reference");
    ASSERT_EQ(per_ref.size(), refs.size()) << id;
    for (size_t j = 0; j < refs.size(); ++j) {
      const auto& want = per_ref[j];
      std::string ctx = id + " ref " + std::to_string(j);
      ++entries;
      EXPECT_EQ(pltrdy_sentences(pred), want.at("hyp_sentences").get<std::vector<std::string>>()) << ctx;
      EXPECT_EQ(pltrdy_sentences(refs[j]), want.at("ref_sentences").get<std::vector<std::string>>()) << ctx;
      EXPECT_EQ(pltrdy_recon_depth_max(pred, refs[j]), want.at("recon_depth_max").get<size_t>()) << ctx;
      if (want.contains("error")) {
        ++errors;
        std::string got;
        try {
          pltrdy_rouge(pred, refs[j]);
        } catch (const PltrdyError& e) {
          got = e.what();
        }
        EXPECT_EQ(got, want.at("error").get<std::string>()) << ctx;
        continue;
      }
      PltrdyScores s;
      ASSERT_NO_THROW(s = pltrdy_rouge(pred, refs[j])) << ctx;
      const PltrdyPRF* got[] = {&s.rouge1, &s.rouge2, &s.rougel};
      const char* names[] = {"rouge-1", "rouge-2", "rouge-l"};
      for (int k = 0; k < 3; ++k) {
        const auto& w = want.at(names[k]);
        EXPECT_BITS_EQ(got[k]->r, w.at("r").get<double>(), ctx + " " + names[k] + " r");
        EXPECT_BITS_EQ(got[k]->p, w.at("p").get<double>(), ctx + " " + names[k] + " p");
        EXPECT_BITS_EQ(got[k]->f, w.at("f").get<double>(), ctx + " " + names[k] + " f");
        compared += 3;
      }
    }
  }
  std::cout << "[rouge_pltrdy] " << cases.size() << " cases, " << entries << " case x ref entries ("
            << errors << " errors), " << compared << " numbers compared bit for bit\n";
}

TEST(RougePltrdy, ByHand) {
  // Unique unigrams: r = 2/5 of {the, cat, sat, on, mat}, p = 2/2 of {the, cat}.
  auto s = pltrdy_rouge("the the the the the cat cat", "the cat sat on the mat");
  EXPECT_DOUBLE_EQ(s.rouge1.r, 0.4);
  EXPECT_DOUBLE_EQ(s.rouge1.p, 1.0);
  auto same = pltrdy_rouge("a b c", "a b c");
  EXPECT_EQ(same.rouge1.f, 2.0 * ((1.0 * 1.0) / (1.0 + 1.0 + 1e-8)));  // 0.999999995
}

TEST(RougePltrdy, ErrorsAndSplit) {
  EXPECT_THROW(pltrdy_rouge("...", "a"), PltrdyError);
  try {
    pltrdy_rouge("", "");
  } catch (const PltrdyError& e) {
    EXPECT_EQ(e.kind(), PltrdyError::Kind::HypothesisEmpty);  // hypothesis checked first
  }
  try {
    pltrdy_rouge("a", ".");
  } catch (const PltrdyError& e) {
    EXPECT_EQ(e.kind(), PltrdyError::Kind::ReferenceEmpty);
  }
  // A whitespace-only piece is the sentence "" (word list [""]), not an error.
  EXPECT_EQ(pltrdy_sentences("  .a  b.\u00a0"), (std::vector<std::string>{"", "a b", ""}));
  EXPECT_NO_THROW(pltrdy_rouge("   ", "a"));
}

TEST(RougePltrdy, RecursionRule) {
  // One 1500-word sentence against an unrelated 10-word one needs > 1000 frames.
  std::string longs, shorts = "q r s t u v w x y z";
  for (int i = 0; i < 1500; ++i) longs += "w" + std::to_string(i) + " ";
  EXPECT_GT(pltrdy_recon_depth_max(longs, shorts), 1000u);
  EXPECT_THROW(pltrdy_rouge(longs, shorts), PltrdyError);
  PltrdyOptions unlimited;
  unlimited.max_recon_depth = 0;
  EXPECT_NO_THROW(pltrdy_rouge(longs, shorts, unlimited));
}
