// The reasoning graders against the reference functions themselves, run on recorded cases
// (tests/fixtures/reasoning/grader_cases.json, scripts/reasoning_reference/record_graders.py):
// lm-evaluation-harness's hendrycks_math utils and gsm8k filters + exact_match.
#include <gtest/gtest.h>

#include "golden.hpp"
#include "metrics/answer_graders.hpp"
#include "metrics/gpqa.hpp"
#include "metrics/gsm8k.hpp"
#include "metrics/hendrycks_math.hpp"

namespace kvbench::metrics {
namespace {

using nlohmann::json;

const json& fixture() {
  static const json f = test::load_fixture("reasoning/grader_cases.json");
  return f;
}

bool raises(const json& v) { return v.is_object() && v.contains("raises"); }

std::optional<std::string> optional_text(const json& v) { return v.is_null() ? std::nullopt : std::optional<std::string>(v.get<std::string>()); }

// What `fn` returns, or {"raises": ...} when it throws what Python raises.
template <typename Fn>
json outcome(Fn fn) {
  try {
    return fn();
  } catch (const PythonRaised&) {
    return {{"raises", "raised"}};
  }
}

void expect_outcome(const json& got, const json& want, const std::string& what) {
  if (raises(want)) EXPECT_TRUE(raises(got)) << what << ": the reference raises " << want << ", we gave " << got;
  else EXPECT_EQ(got, want) << what;
}

TEST(HendrycksMath, EveryFunctionEqualsLmEvalOnRecordedCases) {
  const json& cases = fixture().at("hendrycks_math");
  ASSERT_GE(cases.size(), 80u);
  for (const json& c : cases) {
    const std::string where = c.at("note").get<std::string>() + ": " + c.at("output").get<std::string>();
    const std::optional<std::string> box = last_boxed_only_string(c.at("output"));
    EXPECT_EQ(box ? json(*box) : json(nullptr), c.at("last_boxed")) << where;
    std::optional<std::string> answer;
    if (box) {
      const json removed = outcome([&] { return json(remove_boxed(*box)); });
      expect_outcome(removed, c.at("remove_boxed"), where + " remove_boxed");
      if (removed.is_string()) answer = removed.get<std::string>();
    }
    if (answer) expect_outcome(outcome([&] { return json(hendrycks_strip_string(*answer)); }), c.at("strip_string_output"), where + " strip_string(output)");
    expect_outcome(outcome([&] { return json(hendrycks_strip_string(c.at("gold"))); }), c.at("strip_string_gold"), where + " strip_string(gold)");
    EXPECT_EQ(hendrycks_is_equiv(answer, optional_text(c.at("gold"))), c.at("is_equiv").get<bool>()) << where;
    EXPECT_EQ(answer_grader("math.boxed_equiv").grade(c.at("output"), c.at("gold"), {}).correct, c.at("is_equiv").get<bool>()) << where;
  }
}

TEST(Gsm8k, FiltersAndExactMatchEqualLmEvalOnRecordedCases) {
  const json& cases = fixture().at("gsm8k");
  ASSERT_GE(cases.size(), 30u);
  for (const json& c : cases) {
    const std::string output = c.at("output"), gold = c.at("gold_answer_field");
    const std::string where = c.at("note").get<std::string>() + ": " + output;
    EXPECT_EQ(gsm8k_strict_answer(output), c.at("strict").get<std::string>()) << where;
    EXPECT_EQ(gsm8k_flexible_answer(output), c.at("flexible").get<std::string>()) << where;
    EXPECT_EQ(gsm8k_exact_match(c.at("strict"), gold), c.at("strict_exact_match").get<double>() == 1.0) << where;
    EXPECT_EQ(gsm8k_exact_match(c.at("flexible"), gold), c.at("flexible_exact_match").get<double>() == 1.0) << where;
    EXPECT_EQ(answer_grader("gsm8k.strict").grade(output, gold, {}).correct, c.at("strict_exact_match").get<double>() == 1.0) << where;
    EXPECT_EQ(answer_grader("gsm8k.flexible").grade(output, gold, {}).correct, c.at("flexible_exact_match").get<double>() == 1.0) << where;
  }
}

TEST(Gpqa, FiltersAndExactMatchEqualLmEvalOnRecordedCases) {
  const json& cases = fixture().at("gpqa");
  ASSERT_GE(cases.size(), 15u);
  for (const json& c : cases) {
    const std::string output = c.at("output"), gold = c.at("answer");
    const std::vector<std::string> choices = c.at("choices");
    const std::string where = c.at("note").get<std::string>() + ": " + output;
    EXPECT_EQ(gpqa_strict_answer(output), c.at("strict").get<std::string>()) << where;
    EXPECT_EQ(gpqa_flexible_answer(output, choices), c.at("flexible").get<std::string>()) << where;
    EXPECT_EQ(answer_grader("gpqa.strict").grade(output, gold, choices).correct, c.at("strict_exact_match").get<double>() == 1.0) << where;
    EXPECT_EQ(answer_grader("gpqa.flexible").grade(output, gold, choices).correct, c.at("flexible_exact_match").get<double>() == 1.0) << where;
  }
}

TEST(KvpressBoxed, EqualsKvpressAime25ScoreOnRecordedCases) {
  const json cases = test::load_fixture("reasoning/kvpress_aime_cases.json").at("cases");
  ASSERT_GE(cases.size(), 120u);
  for (const json& c : cases) {
    const AnswerGrade g = answer_grader("kvpress.boxed").grade(c.at("output"), c.at("gold"), {});
    EXPECT_EQ(g.extracted, std::optional<std::string>(c.at("extract_boxed").get<std::string>())) << c.at("output");
    EXPECT_EQ(g.correct, c.at("correct").get<bool>()) << c.at("output");
    const AnswerGrade first = answer_grader("kvpress.first_boxed").grade(c.at("output"), c.at("gold"), {});
    EXPECT_EQ(first.extracted ? json(*first.extracted) : json(nullptr), c.at("math500_extract_boxed")) << c.at("output");
    EXPECT_EQ(first.correct, c.at("math500_correct").get<bool>()) << c.at("output");
  }
}

TEST(AnswerGraders, AnUnknownNameListsTheKnownOnes) {
  try {
    answer_grader("math.nope");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown answer grader 'math.nope' (known: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gsm8k.strict"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvbench::metrics
