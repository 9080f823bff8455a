// Needle in a haystack: placement by position (the original tester's sentence-boundary walk),
// scoring, the prompt against the golden template, and an end-to-end run on stories260K.
#include <gtest/gtest.h>

#include <algorithm>

#include "metrics/rouge_pltrdy.hpp"
#include "metrics/unicode.hpp"
#include "models/model_loader.hpp"
#include "task_fixtures.hpp"
#include "tokenizers/tokenizer.hpp"
#include "tasks/needle_haystack.hpp"
#include "tasks/needle_kvpress.hpp"
#include "tasks/run_task.hpp"
#include "tasks/golden_prompts_b.hpp"

namespace kvbench::tasks {
namespace {

std::string shared(const std::string& rel) { return std::string(KVBENCH_SHARED_DIR) + "/" + rel; }

using testing::golden_prompt;

const models::Tokenizer& needle_tokenizer() {
  static models::Tokenizer tok(models::locate_model("stories260K", "").tokenizer_path);
  return tok;
}

TEST(NeedlePlacement, WalksBackToTheLastPeriodBeforeTheDepthPoint) {
  const int P = 99;  // the period token
  const std::vector<int> ctx = {1, 2, P, 3, 4, P, 5, 6, 7, 8};
  // int(10 * 0.8) = 8: ctx[7] is 6, ctx[6] is 5, ctx[5] is P -> insert at 6.
  NeedlePlacement a = place_needle(ctx, {42, 43}, 80, 100, 0, {P});
  EXPECT_EQ(a.requested_point, 8);
  EXPECT_EQ(a.needle_begin, 6);
  EXPECT_EQ(a.tokens, (std::vector<int>{1, 2, P, 3, 4, P, 42, 43, 5, 6, 7, 8}));
  // int(10 * 0.5) = 5: ctx[4] = 4 -> back to 3 (after the first period); a point just after a
  // period stays where it is.
  EXPECT_EQ(place_needle(ctx, {42}, 50, 100, 0, {P}).needle_begin, 3);
  EXPECT_EQ(place_needle(ctx, {42}, 60, 100, 0, {P}).needle_begin, 6);
  // No period before the point: the needle goes first. Depth 100 appends.
  EXPECT_EQ(place_needle(ctx, {42}, 20, 100, 0, {P}).needle_begin, 0);
  EXPECT_EQ(place_needle(ctx, {42}, 100, 100, 0, {P}).needle_begin, 10);
  // context_length - buffer = 8 leaves 8 - 2 = 6 context tokens; int(6 * 0.99) = 5 -> 3.
  NeedlePlacement cut = place_needle(ctx, {42, 43}, 99, 12, 4, {P});
  EXPECT_EQ(cut.context_tokens, 6);
  EXPECT_EQ(cut.needle_begin, 3);
  EXPECT_EQ(cut.tokens.size(), 8u);
  EXPECT_THROW(place_needle(ctx, {42}, 101, 100, 0, {P}), std::invalid_argument);
  EXPECT_THROW(place_needle(ctx, {42, 43}, 50, 5, 4, {P}), std::invalid_argument);
}

TEST(NeedlePlacement, RealHaystackLandsOnASentenceBoundaryAtTheDepth) {
  const auto& tok = needle_tokenizer();
  const auto files = haystack_files(shared("data/needle_haystack/PaulGrahamEssays"));
  ASSERT_EQ(files.size(), 49u);
  EXPECT_NE(files.front().find("addiction.txt"), std::string::npos);  // sorted order
  const std::string hay = read_haystack(files, tok, 2000);
  const std::vector<int> periods = period_token_ids(tok);
  const std::vector<int> needle = tok.encode(kNeedle, false);
  const std::vector<int> ctx = tok.encode(trim_to_tokens(hay, tok, 1500), false);
  auto is_period = [&](int id) { return std::find(periods.begin(), periods.end(), id) != periods.end(); };
  int64_t previous_begin = 0;
  for (double depth : {10.0, 25.0, 50.0, 77.0, 90.0}) {
    NeedlePlacement p = place_needle(ctx, needle, depth, 1500, 200, periods);
    const int64_t kept = p.context_tokens;
    EXPECT_EQ(kept, 1300 - static_cast<int64_t>(needle.size()));
    EXPECT_EQ(p.requested_point, static_cast<int64_t>(kept * (depth / 100.0)));
    ASSERT_GT(p.needle_begin, 0);
    EXPECT_LE(p.needle_begin, p.requested_point);
    EXPECT_TRUE(is_period(p.tokens[p.needle_begin - 1])) << "depth " << depth;
    // No sentence boundary between the insertion and the requested point: it is the last one.
    for (int64_t i = p.needle_begin; i < p.requested_point; ++i) EXPECT_FALSE(is_period(ctx[i])) << i;
    EXPECT_TRUE(std::equal(needle.begin(), needle.end(), p.tokens.begin() + p.needle_begin));
    EXPECT_GE(p.needle_begin, previous_begin);  // deeper never lands earlier
    previous_begin = p.needle_begin;
    // Decoded, the needle sits right after a '.'.
    const std::string text = tok.decode(p.tokens);
    const size_t at = text.find("The best thing to do in San Francisco");
    ASSERT_NE(at, std::string::npos);
    const std::string before = text.substr(0, at);
    EXPECT_EQ(before.substr(before.find_last_not_of("\n "), 1), ".") << depth;
  }
}

TEST(NeedleScoring, RougeAndKeywords) {
  const std::vector<std::string> kw = {"sandwich", "Dolores Park"};
  NeedleScores exact = score_needle_response(kNeedle, kNeedleAnswer, "The best thing to do in San Francisco is eat a "
                                                                     "sandwich and sit in Dolores Park on a sunny day.", kw);
  EXPECT_DOUBLE_EQ(exact.score, 10.0);
  EXPECT_DOUBLE_EQ(exact.rouge1_recall, 100.0);
  EXPECT_DOUBLE_EQ(exact.headkv, 100.0);
  EXPECT_EQ(exact.keyword, 1.0);
  // 3 of the needle's 21 rouge tokens; precision 3/3: F = 2 * (1/7) / (1 + 1/7) = 0.25.
  NeedleScores part = score_needle_response(kNeedle, kNeedleAnswer, "eat a sandwich", kw);
  EXPECT_NEAR(part.rouge1_recall, 100.0 * 3 / 21, 1e-9);
  EXPECT_NEAR(part.score, 2.5, 1e-9);
  EXPECT_NEAR(part.headkv, 100.0 * 3 / 11, 1e-9);  // 3 of the answer's 11 distinct words
  EXPECT_EQ(part.keyword, 0.0);
  EXPECT_EQ(score_needle_response(kNeedle, kNeedleAnswer, "", kw).score, 0.0);
}

TEST(NeedleTask, RunsTheGridEndToEndWithTheGoldenTemplate) {
  nlohmann::json r = run_task({{"task", "needle"},
                               {"limit", 3},
                               {"task_params",
                                {{"context_lengths", {256, 384}}, {"depth_percents", {0, 50}}, {"max_new_tokens", 6},
                                 {"record_prompts", true}}}});
  ASSERT_EQ(r["examples"].size(), 3u);
  const auto& heat = r["metrics"]["heatmap"];
  EXPECT_EQ(heat.size(), 3u);
  EXPECT_TRUE(heat.contains("len=256,depth=0") && heat.contains("len=256,depth=50") && heat.contains("len=384,depth=0"));
  double sum = 0;
  for (const auto& e : r["examples"]) {
    const double s = e["metrics"]["score"];
    EXPECT_GE(s, 0.0);
    EXPECT_LE(s, 10.0);
    EXPECT_EQ(heat[e["id"].get<std::string>()], s);
    sum += s;
    // The prompt is the golden template around the haystack-with-needle.
    const std::string tmpl = golden_prompt("needle_kvcache_factory.txt");
    const size_t slot = tmpl.find("{context}");
    ASSERT_NE(slot, std::string::npos);
    const std::string prompt = e["prompt"];
    const std::string head = tmpl.substr(0, slot), tail = tmpl.substr(slot + 9);
    ASSERT_GT(prompt.size(), head.size() + tail.size());
    EXPECT_EQ(prompt.substr(0, head.size()), head);
    EXPECT_EQ(prompt.substr(prompt.size() - tail.size()), tail);
    EXPECT_NE(prompt.find("eat a sandwich and sit in Dolores Park on a sunny day."), std::string::npos);
    EXPECT_LE(e["prompt_tokens"].get<int64_t>(), e["context_length"].get<int64_t>());
  }
  EXPECT_NEAR(r["metrics"]["score"].get<double>(), sum / 3, 1e-12);
  // depth 0: the needle opens the context.
  const std::string first = r["examples"][0]["prompt"];
  const size_t open = first.find("<book> ") + 7;
  EXPECT_EQ(first.find("The best thing"), first.find_first_not_of(" \n", open));
  EXPECT_EQ(r["examples"][0]["needle_token_index"], 0);
}

TEST(NeedleTask, MissingHaystackNamesTheFolderAndSource) {
  try {
    run_task({{"task", "needle"}, {"data_root", "/nonexistent-kvbench"}, {"limit", 1}});
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("PaulGrahamEssays"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvbench::tasks

namespace kvbench::tasks {
namespace {

// kvpress's needle_in_haystack: the needle inserted as its utils.py does (recorded by running it
// with stories260K's tokenizer: scripts/needle_reference/record_kvpress.py), each context run by
// kvpress's pipeline once, scored by pltrdy's Rouge of needle.strip() against the answer.
TEST(NeedleKvpress, InsertsTheNeedleAsKvpresssUtils) {
  const nlohmann::json rec = nlohmann::json::parse(testing::read_file(testing::fixture("needle_kvpress/inserted.json")));
  const models::Tokenizer tok(models::load_model("stories260K").tokenizer_path);
  const needle_kvpress::EncodedRow row = needle_kvpress::encode_row(tok, needle_kvpress::read_row(testing::fixture("needle_kvpress/row.jsonl")));
  for (const auto& c : rec["cases"])
    EXPECT_EQ(needle_kvpress::insert_needle(tok, row, c["max_context_length"], c["needle_depth"].get<double>()), c["context"].get<std::string>())
        << c["max_context_length"] << " " << c["needle_depth"];
  EXPECT_EQ(rec["cases"].size(), 15u);
}

TEST(NeedleKvpress, RunsKvpresssPipelineAndScoresWithItsRouge) {
  const nlohmann::json r = run_task({{"task", "needle"}, {"policy", "snapkv"}, {"budget", "64"},
                                     {"task_params", {{"pipeline", "kvpress"}, {"data_file", testing::fixture("needle_kvpress/row.jsonl")},
                                                      {"context_lengths", {300, 512}}, {"depth_percents", {0, 50}}, {"max_new_tokens", 8},
                                                      {"record_prompts", true}}}});
  ASSERT_EQ(r["examples"].size(), 4u);
  const needle_kvpress::Row row = needle_kvpress::read_row(testing::fixture("needle_kvpress/row.jsonl"));
  for (const auto& e : r["examples"]) {
    const std::string prompt = e["prompt"];
    EXPECT_EQ(prompt.substr(prompt.size() - row.question.size() - 1 - row.answer_prefix.size()), row.question + "\n" + row.answer_prefix);
    const std::string pred = metrics::python_strip(e["prediction"].get<std::string>());
    if (pred.empty()) {
      EXPECT_TRUE(e["metrics"]["rougeL_f"].is_null());
      continue;
    }
    const metrics::PltrdyScores s = metrics::pltrdy_rouge(metrics::python_strip(row.needle), pred);
    EXPECT_EQ(e["metrics"]["rouge1_f"].get<double>(), s.rouge1.f);
    EXPECT_EQ(e["metrics"]["rougeL_r"].get<double>(), s.rougel.r);
    EXPECT_EQ(r["metrics"]["heatmap"][e["id"].get<std::string>()], e["metrics"]["rougeL_f"]);
  }
  EXPECT_EQ(r["metrics"]["prefills"], 4);
  EXPECT_EQ(r["settings"]["resolved"]["max_new_tokens"], 8);
  EXPECT_NE(testing::error_of([] { run_task({{"task", "needle"}, {"task_params", {{"pipeline", "kvpress"}, {"keywords", {"x"}}}}}); })
                .find("keywords is the original tester's"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { run_task({{"task", "needle"}, {"task_params", {{"pipeline", "kvpress"}}}}); }).find("alessiodevoto/paul_graham_essays"),
            std::string::npos);
}

}  // namespace
}  // namespace kvbench::tasks
