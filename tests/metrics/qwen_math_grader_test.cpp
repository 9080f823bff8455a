// R-KV's grader (Qwen2.5-Math's evaluation/ as vendored by Zefan-Cai/R-KV) against the reference
// run on recorded cases: the 118 hand-written edge cases of grader_cases.json (through
// eval_math.main, scripts/reasoning_reference/record_graders.py) and 2,986 answers of the bundled
// MATH-500, AIME 2024 and GSM8K sets, right, wrong and rewritten
// (scripts/reasoning_reference/record_qwen_math.py).
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "golden.hpp"
#include "metrics/answer_graders.hpp"
#include "metrics/latex_expression.hpp"
#include "metrics/qwen_math_answer.hpp"
#include "metrics/qwen_math_equal.hpp"

namespace kvbench::metrics {
namespace {

using nlohmann::json;

// The bundled data set's records (data/reasoning/<set>/test.jsonl), the examples the cases grade.
const std::vector<json>& records(const std::string& set) {
  static std::map<std::string, std::vector<json>> cache;
  std::vector<json>& rows = cache[set];
  if (rows.empty()) {
    std::ifstream in(std::string(KVBENCH_TESTS_DIR) + "/../data/reasoning/" + set + "/test.jsonl");
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) rows.push_back(json::parse(line));
  }
  return rows;
}

// The gold as the task hands it to the grader: MATH's worked solution, GSM8K's text after "####",
// AIME's answer.
std::string gold_of(const std::string& set, const json& record) {
  if (set == "math500") return record.at("solution");
  const json& answer = record.at("answer");
  const std::string text = answer.is_string() ? answer.get<std::string>() : answer.dump();
  return set == "gsm8k" ? text.substr(text.rfind("####") + 4) : text;
}

json optional_json(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

TEST(QwenMathGrader, EqualsRkvOnTheRecordedEdgeCases) {
  const json cases = test::load_fixture("reasoning/grader_cases.json").at("qwen_math");
  ASSERT_EQ(cases.size(), 118u);
  int equal = 0;
  for (const json& c : cases) {
    const std::string where = c.at("note").get<std::string>() + ": " + c.at("output").get<std::string>();
    EXPECT_EQ(json(qwen_math::extract_answer(c.at("output"))), c.at("extract_answer")) << where;
    EXPECT_EQ(json(qwen_math::strip_string(c.at("gold"))), c.at("strip_string_gold")) << where;
    const qwen_math::Verdict v = qwen_math::grade(c.at("output"), c.at("gold_solution"), true);
    EXPECT_EQ(optional_json(v.pred), c.at("pred")) << where;
    EXPECT_EQ(json(v.gt), c.at("gt")) << where;
    EXPECT_EQ(v.correct, c.at("math_equal").get<bool>()) << where << " (pred " << optional_json(v.pred) << ", gt " << v.gt << ")";
    EXPECT_FALSE(v.outside_subset) << where;
    equal += v.correct;
  }
  EXPECT_GT(equal, 60);
  EXPECT_LT(equal, 100);
}

TEST(QwenMathGrader, EqualsRkvOnTheBundledAnswerSets) {
  const json fixture = test::load_fixture("reasoning/qwen_math_answer_sets.json");
  const json& cases = fixture.at("cases");
  ASSERT_GT(cases.size(), 2900u);
  int mismatches = 0, outside = 0, equal = 0;
  for (const json& c : cases) {
    const std::string set = c.at("set");
    const std::vector<json>& rows = records(set);
    ASSERT_LT(c.at("index").get<size_t>(), rows.size()) << set;
    const qwen_math::Verdict v = qwen_math::grade(c.at("output"), gold_of(set, rows[c.at("index").get<size_t>()]), set == "math500");
    const std::string where = c.at("set").get<std::string>() + " #" + c.at("index").dump() + " " + c.at("kind").get<std::string>() + ": " + c.at("output").get<std::string>();
    EXPECT_EQ(optional_json(v.pred), c.at("pred")) << where;
    EXPECT_EQ(json(v.gt), c.at("gt")) << where;
    if (v.correct != c.at("score").get<bool>()) {
      ++mismatches;
      ADD_FAILURE() << where << ": R-KV " << c.at("score") << ", kvbench " << v.correct << " (pred " << optional_json(v.pred) << ", gt " << v.gt << ")";
    }
    outside += v.outside_subset;
    equal += v.correct;
  }
  std::cout << "qwen_math vs R-KV: " << cases.size() << " answers, " << equal << " equal, " << mismatches << " verdicts differ, " << outside << " outside the symbolic subset\n";
}

// The symbolic half on its own: what sympy decides by algebra, by value and by parse, each a
// decision a text or float comparison gets wrong.
TEST(LatexExpression, DecidesAsSympyDoes) {
  auto eq = [](const std::string& a, const std::string& b) { return latex_symbolic_equal(a, b) == SymbolicVerdict::kEqual; };
  EXPECT_TRUE(eq("x^2+2x+1", "(x+1)^2"));
  EXPECT_FALSE(eq("x^2+2x+2", "(x+1)^2"));
  EXPECT_TRUE(eq("\\frac{\\sqrt{12}}{2}", "\\sqrt{3}"));
  EXPECT_TRUE(eq("0.33333", "\\frac{1}{3}"));    // float values within 1e-4
  EXPECT_FALSE(eq("0.333", "\\frac{1}{3}"));
  EXPECT_FALSE(eq("\\pi", "3.14159"));           // parse_latex reads \pi as a symbol
  EXPECT_FALSE(eq("\\sqrt{x^2}", "x"));          // symbols are complex
  EXPECT_TRUE(eq("\\frac{1}{2}.Ihope", "0.5"));  // the rest after the longest expression is ignored
  EXPECT_TRUE(eq("2\\cdot3", "2x3"));            // an 'x' between numbers is a times sign
  EXPECT_FALSE(eq("\\sin^{-1}(1)", "\\frac{\\pi}{2}"));  // asin(1) vs pi/2 with pi a symbol
  EXPECT_TRUE(eq("\\sin^{-1}(1)", "1.5708"));
  EXPECT_TRUE(eq("1,000", "1000"));
  EXPECT_TRUE(eq("\\log_{2}8", "3"));
  EXPECT_TRUE(eq("\\binom{5}{2}", "10"));
  EXPECT_TRUE(eq("f(x+1)", "f(1+x)"));
  EXPECT_FALSE(eq("f(x)", "g(x)"));
  EXPECT_EQ(latex_symbolic_equal("\\int_0^1 x dx", "\\frac{1}{2}"), SymbolicVerdict::kOutsideSubset);
  EXPECT_FALSE(latex_parses("½"));
  EXPECT_FALSE(latex_parses(""));
}

// A model's output can be anything: nesting that would make a backtracking reader exponential, or
// chains deep enough to exhaust the stack, are read in linear time or not at all (as sympy's
// converter gives up past Python's recursion limit), never crash.
TEST(LatexExpression, PathologicalAnswersAreReadOrRefusedNeverHang) {
  auto rep = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  EXPECT_EQ(latex_symbolic_equal(rep("(", 30) + "1" + rep(")", 30), "1"), SymbolicVerdict::kEqual);
  EXPECT_EQ(latex_symbolic_equal(rep("(", 150) + "1" + rep(")", 150), "1"), SymbolicVerdict::kNotEqual);  // too deep to read
  for (const std::string& text : {rep("(1+|x", 300), rep("x(", 300), rep("|x(", 300), rep("\\sin ", 100000) + "x", rep("-", 200000) + "1",
                                  rep("x^", 100000) + "2", rep("\\frac{1}{", 50000), rep("1+", 100000) + "1"})
    EXPECT_EQ(latex_symbolic_equal(text, "1"), SymbolicVerdict::kNotEqual) << text.substr(0, 40);
  EXPECT_FALSE(qwen_math::math_equal(rep("(1+|x", 300), "1"));
}

TEST(QwenMathGrader, WordNumbersAsWord2Number) {
  EXPECT_EQ(qwen_math::word_to_num("five"), "5");
  EXPECT_EQ(qwen_math::word_to_num("two million twenty three thousand and forty nine"), "2023049");
  EXPECT_EQ(qwen_math::word_to_num("one hundred point five"), "100.5");
  EXPECT_EQ(qwen_math::word_to_num("007"), "7");
  EXPECT_EQ(qwen_math::word_to_num("thousand million"), std::nullopt);  // malformed order
  EXPECT_EQ(qwen_math::word_to_num("no number"), std::nullopt);
}

}  // namespace
}  // namespace kvbench::metrics
