// Multi-document QA (lost-in-the-middle): the exact prompt of a known example against the golden
// file, the make_qa_data ordering (a built 10-document ordering equals the staged one), data
// location errors, malformed lines with file:line, and an end-to-end run on stories260K.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>

#include "tasks/golden_prompts_b.hpp"
#include "tasks/multidoc_qa_data.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::tasks {
namespace {

std::string litm(const std::string& rel) { return std::string(KVBENCH_SHARED_DIR) + "/data/multidoc_qa_litm/" + rel; }

std::string thrown_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(MultidocQaPrompt, KnownExampleEqualsTheGoldenPrompt) {
  nlohmann::json r = run_task({{"task", "multidoc_qa"},
                               {"limit", 1},
                               {"task_params",
                                {{"documents", 10}, {"gold_position", 4}, {"truncation", "middle"},
                                 {"max_new_tokens", 2}, {"record_prompts", true}}}});
  ASSERT_EQ(r["examples"].size(), 1u);
  // The golden is the whole prompt; 10 documents do not fit 512 tokens, so what is fed and recorded
  // is its middle cut: the golden's head and tail with the middle left out.
  const std::string fed = r["examples"][0]["prompt"].get<std::string>();
  const std::string golden = testing::golden_prompt("multidoc_qa_10docs_gold4_first.txt");
  EXPECT_LT(fed.size(), golden.size());
  EXPECT_EQ(fed.substr(0, 300), golden.substr(0, 300));
  EXPECT_EQ(fed.substr(fed.size() - 300), golden.substr(golden.size() - 300));
  EXPECT_EQ(r["examples"][0]["references"], nlohmann::json::array({"Wilhelm Conrad Röntgen"}));
  EXPECT_EQ(r["metrics"]["built_ordering"], false);
}

TEST(MultidocQaData, BuiltOrderingEqualsTheStagedFile) {
  const auto twenty = read_qa_examples(litm("derived_from_ViktorTorp/nq-open-20_total_documents_gold_at_0.first441.jsonl.gz"), 5);
  for (int64_t gold : {0, 4, 9}) {
    const auto staged = read_qa_examples(
        litm("derived_from_ViktorTorp/nq-open-10_total_documents_gold_at_" + std::to_string(gold) + ".first441.DERIVED.jsonl.gz"), 5);
    ASSERT_EQ(staged.size(), 5u);
    for (size_t i = 0; i < staged.size(); ++i) {
      const QaExample built = arrange_documents(twenty[i], 10, gold);
      ASSERT_EQ(built.documents.size(), 10u);
      EXPECT_TRUE(built.documents[gold].isgold);
      for (size_t d = 0; d < 10; ++d) {
        EXPECT_EQ(built.documents[d].title, staged[i].documents[d].title) << "gold " << gold << " example " << i << " doc " << d;
        EXPECT_EQ(built.documents[d].text, staged[i].documents[d].text);
      }
    }
  }
  // A 15-document ordering keeps the top 14 distractors in retrieval order around the gold one.
  const QaExample fifteen = arrange_documents(twenty[0], 15, 7);
  EXPECT_EQ(fifteen.documents[7].title, twenty[0].documents[0].title);
  EXPECT_EQ(fifteen.documents[6].text, twenty[0].documents[7].text);
  EXPECT_EQ(fifteen.documents[8].text, twenty[0].documents[8].text);
  EXPECT_EQ(fifteen.documents[14].text, twenty[0].documents[14].text);
  EXPECT_NE(thrown_message([&] { arrange_documents(twenty[0], 25, 0); }).find("only 19 distractors"), std::string::npos);
}

TEST(MultidocQaData, LocatesStagedBuiltOrMissingFiles) {
  const std::string root = std::string(KVBENCH_SHARED_DIR) + "/data";
  QaDataSource staged = locate_qa_data(root, 10, 9);
  EXPECT_FALSE(staged.build);
  EXPECT_NE(staged.path.find("10_total_documents_gold_at_9"), std::string::npos);
  QaDataSource built = locate_qa_data(root, 20, 19);
  EXPECT_TRUE(built.build);
  EXPECT_NE(built.path.find("20_total_documents_gold_at_0"), std::string::npos);
  const std::string missing = thrown_message([&] { locate_qa_data(root, 30, 14); });
  EXPECT_NE(missing.find("nq-open-30_total_documents_gold_at_14.jsonl.gz: missing"), std::string::npos) << missing;
  EXPECT_NE(missing.find("nelson-liu/lost-in-the-middle"), std::string::npos) << missing;
  EXPECT_THROW(locate_qa_data(root, 10, 10), std::invalid_argument);
}

TEST(MultidocQaData, MalformedLinesNameFileLineAndField) {
  const std::string path = ::testing::TempDir() + "/kvbench_bad_qa.jsonl";
  {
    std::ofstream out(path);
    out << R"({"question": "q", "answers": ["a"], "ctxs": [{"title": "t", "text": "x", "isgold": true, "hasanswer": true}]})" << "\n";
    out << R"({"question": "q", "answers": ["a"], "ctxs": [{"title": 5, "text": "x"}]})" << "\n";
    out << "{not json\n";
  }
  EXPECT_EQ(read_qa_examples(path, 1).size(), 1u);
  const std::string bad_field = thrown_message([&] { read_qa_examples(path, 2); });
  EXPECT_NE(bad_field.find(path + ":2: field 'ctxs[0].title': expected a string, got number 5"), std::string::npos) << bad_field;
  {
    std::ofstream out(path);
    out << R"({"question": "q", "answers": "a", "ctxs": []})" << "\n";
  }
  EXPECT_NE(thrown_message([&] { read_qa_examples(path, 0); }).find(path + ":1: field 'answers'"), std::string::npos);
  {
    std::ofstream out(path);
    out << "\n{not json\n";
  }
  EXPECT_NE(thrown_message([&] { read_qa_examples(path, 0); }).find(path + ":2: invalid JSON"), std::string::npos);
  std::remove(path.c_str());
}

TEST(MultidocQaTask, RunsEndToEndAndScoresBothEms) {
  nlohmann::json r = run_task({{"task", "multidoc_qa"},
                               {"limit", 2},
                               {"task_params", {{"documents", 10}, {"gold_position", 9}, {"truncation", "middle"},
                                                {"max_new_tokens", 6}}}});
  ASSERT_EQ(r["examples"].size(), 2u);
  double subspan = 0;
  for (const auto& e : r["examples"]) {
    EXPECT_LE(e["prompt_tokens"].get<int64_t>(), 512 - 6);
    EXPECT_TRUE(e["metrics"].contains("best_subspan_em") && e["metrics"].contains("strict_em"));
    EXPECT_LE(e["metrics"]["strict_em"].get<double>(), e["metrics"]["best_subspan_em"].get<double>());
    subspan += e["metrics"]["best_subspan_em"].get<double>();
  }
  EXPECT_DOUBLE_EQ(r["metrics"]["best_subspan_em"].get<double>(), subspan / 2);
  EXPECT_EQ(r["settings"]["styles"]["litm"]["decoding"]["max_new_tokens"], 100);
}

TEST(MultidocQaTask, ReferenceTruncationSkipsPromptsLongerThanTheModel) {
  // 20 documents never fit 512 tokens: every prompt is skipped, and a job with no scored example fails.
  const std::string msg = thrown_message(
      [] { run_task({{"task", "multidoc_qa"}, {"limit", 1}, {"task_params", {{"documents", 20}, {"gold_position", 0}}}}); });
  EXPECT_NE(msg.find("no example was scored (skipped_too_long = 441)"), std::string::npos) << msg;
}

}  // namespace
}  // namespace kvbench::tasks
