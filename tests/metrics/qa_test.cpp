// SQuAD / lost-in-the-middle QA parity over every case of golden/squad_qa.json.
#include <iomanip>

#include "golden.hpp"
#include "metrics/qa.hpp"

using namespace kvbench::metrics;
using kvbench::test::load_golden;

TEST(QaGolden, EveryCaseBitExact) {
  auto golden = load_golden("squad_qa.json");
  const auto& cases = golden.at("cases");
  ASSERT_GE(cases.size(), 170u);
  int compared = 0;
  for (const auto& c : cases) {
    std::string id = c.at("id");
    std::string pred = c.at("prediction");
    auto gts = c.at("ground_truths").get<std::vector<std::string>>();
    EXPECT_EQ(normalize_answer(pred), c.at("normalize_answer_prediction").get<std::string>()) << id;
    auto ngts = c.at("normalize_answer_ground_truths").get<std::vector<std::string>>();
    ASSERT_EQ(ngts.size(), gts.size()) << id;
    for (size_t j = 0; j < gts.size(); ++j) {
      EXPECT_EQ(normalize_answer(gts[j]), ngts[j]) << id << " gt " << j;
      EXPECT_BITS_EQ(exact_match_score(pred, gts[j]), c.at("exact_match_per_gt")[j].get<double>(),
                     id + " em gt " + std::to_string(j));
      EXPECT_BITS_EQ(qa_token_f1(pred, gts[j]), c.at("f1_per_gt")[j].get<double>(),
                     id + " f1 gt " + std::to_string(j));
      compared += 2;
    }
    EXPECT_BITS_EQ(exact_match(pred, gts), c.at("exact_match").get<double>(), id + " em");
    EXPECT_BITS_EQ(token_f1(pred, gts), c.at("f1").get<double>(), id + " f1");
    EXPECT_BITS_EQ(best_subspan_em(pred, gts), c.at("best_subspan_em").get<double>(), id + " bsem");
    compared += 3;
  }
  std::cout << "[squad_qa] " << cases.size() << " cases, " << compared
            << " numbers compared bit for bit (+ every normalized string)\n";
}

TEST(Qa, ByHand) {
  EXPECT_DOUBLE_EQ(qa_token_f1("I think it is Paris, France.", "Paris"), 2.0 / 7.0);
  EXPECT_EQ(exact_match_score("", ""), 1.0);
  EXPECT_EQ(qa_token_f1("", ""), 0.0);
  EXPECT_EQ(normalize_answer("The  Cat, a dog and an apple"), "cat dog and apple");
  EXPECT_EQ(normalize_answer("thé"), "thé");              // Unicode \b: no article inside
  EXPECT_EQ(normalize_answer("“Quoted” — ¿sí?"), "“quoted” — ¿sí");  // only ASCII punctuation
  EXPECT_EQ(normalize_answer("a\u00a0b\u3000c"), "b c");   // Unicode whitespace
  EXPECT_NE(normalize_answer("İstanbul"), normalize_answer("istanbul"));
}

TEST(Qa, SubspanAndStrictEm) {
  std::vector<std::string> gts = {"Paris"};
  EXPECT_EQ(best_subspan_em("The answer is Paris.", gts), 1.0);
  EXPECT_EQ(strict_em("The answer is Paris.", gts), 0.0);
  EXPECT_EQ(strict_em("paris!", gts), 1.0);
  EXPECT_EQ(best_subspan_em("anything", {"the"}), 1.0);  // empty normalized gt always matches
  EXPECT_EQ(exact_match("x", {}), 0.0);
  EXPECT_EQ(token_f1("x", {}), 0.0);
}
