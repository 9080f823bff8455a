// Fidelity to the Full cache (RoCo §5, BUZZ eq. 4, K-VEC coverage): a budget that holds the whole
// sequence is perfect on every score, a small one is not; reconstruction's prompt equals the
// golden file; malformed data names file and line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/file_tree.hpp"
#include "models/model_loader.hpp"
#include "tokenizers/tokenizer.hpp"
#include "tasks/golden_prompts_b.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::tasks {
namespace {

// Reconstruction outputs are long enough (24 tokens) for corpus BLEU's 4-grams.
nlohmann::json reconstruction_fidelity(const std::string& policy, const std::string& budget, const std::string& protocol) {
  return run_task({{"task", "fidelity/reconstruction"},
                   {"policy", policy},
                   {"budget", budget},
                   {"protocol", protocol},
                   {"limit", 2},
                   {"task_params", {{"max_article_tokens", 120}, {"max_new_tokens", 24}}}});
}

nlohmann::json needle_fidelity(const std::string& policy, const std::string& budget, const std::string& protocol) {
  return run_task({{"task", "fidelity/needle"},
                   {"policy", policy},
                   {"budget", budget},
                   {"protocol", protocol},
                   {"limit", 2},
                   {"task_params", {{"context_lengths", {192}}, {"depth_percents", {30, 70}}, {"max_new_tokens", 8}}}});
}

void expect_perfect(const nlohmann::json& r) {
  const auto& m = r["metrics"];
  ASSERT_EQ(r["examples"].size(), 2u);
  EXPECT_EQ(m["sequences"], 2);
  EXPECT_GE(m["probe_steps"].get<int64_t>(), 2 * 2);  // prefill and decode steps of both sequences
  EXPECT_DOUBLE_EQ(m["bleu"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(m["sentence_bleu"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(m["rouge1"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(m["rouge2"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(m["rougeL"].get<double>(), 100.0);
  // METEOR of identical texts is fmean * (1 - 0.5 (1/m)^3) < 100: one chunk of m matches.
  EXPECT_GT(m["meteor"].get<double>(), 99.0);
  EXPECT_DOUBLE_EQ(m["jaccard"].get<double>(), 1.0);
  EXPECT_LT(m["attention_error"].get<double>(), 1e-5);
  EXPECT_DOUBLE_EQ(m["coverage"].get<double>(), 1.0);
  for (const auto& e : r["examples"]) {
    EXPECT_EQ(e["prediction"], e["references"][0]);
    EXPECT_FALSE(e["prediction"].get<std::string>().empty());
    EXPECT_DOUBLE_EQ(e["metrics"]["jaccard"].get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(e["metrics"]["bleu"].get<double>(), 100.0);
    std::istringstream words(e["prediction"].get<std::string>());
    double m_words = 0;
    for (std::string w; words >> w;) ++m_words;
    EXPECT_NEAR(e["metrics"]["meteor"].get<double>(), 100 * (1 - 0.5 * std::pow(1 / m_words, 3)), 1e-9);
  }
}

TEST(FidelityTask, BudgetHoldingTheWholeSequenceIsPerfect) {
  expect_perfect(reconstruction_fidelity("kvec", "4096", "oneshot"));
  expect_perfect(reconstruction_fidelity("full", "full", "oneshot"));
  expect_perfect(reconstruction_fidelity("kvec", "4096", "decode"));
}

TEST(FidelityTask, SmallBudgetDivergesFromFull) {
  nlohmann::json r = needle_fidelity("kvec", "24", "oneshot");
  const auto& m = r["metrics"];
  EXPECT_LT(m["jaccard"].get<double>(), 0.95);
  EXPECT_GT(m["attention_error"].get<double>(), 1e-3);
  EXPECT_LT(m["coverage"].get<double>(), 0.9);
  EXPECT_GT(m["coverage"].get<double>(), 0.0);
  // The base task's own metrics are kept for both runs.
  EXPECT_TRUE(m["base"].contains("score") && m["full_base"].contains("score"));
  EXPECT_LE(r["memory"]["max_cache_len"].get<int64_t>(), 24 + 8);
}

TEST(FidelityTask, RejectsPerplexityAndUnknownBases) {
  EXPECT_THROW(run_task({{"task", "fidelity/tinystories"}}), std::invalid_argument);
  EXPECT_THROW(run_task({{"task", "fidelity/no-such-task"}}), std::invalid_argument);
}

TEST(FidelityReconstruction, PromptEqualsTheGoldenFileAndRunsEndToEnd) {
  nlohmann::json r = run_task({{"task", "fidelity/reconstruction"},
                               {"policy", "kvec"},
                               {"budget", "50%"},
                               {"limit", 1},
                               {"task_params", {{"max_article_tokens", 100000}, {"max_new_tokens", 4}, {"record_prompts", true}}}});
  ASSERT_EQ(r["examples"].size(), 1u);
  const auto& e = r["examples"][0];
  EXPECT_EQ(e["prompt"].get<std::string>(), testing::golden_prompt("reconstruction_cnn_dailymail_first.txt"));
  EXPECT_EQ(e["id"], "f001ec5c4704938247d27a44948eebb37ae98d01");
  EXPECT_TRUE(e["base_metrics"].contains("rouge1"));
  EXPECT_TRUE(r["metrics"]["base"].contains("rougeL"));

  // The default length rule keeps prompt + repetition inside the model's context.
  nlohmann::json fit = run_task({{"task", "fidelity/reconstruction"}, {"limit", 1}, {"task_params", {{"max_new_tokens", 2}}}});
  const models::Tokenizer tok(models::locate_model("stories260K", "").tokenizer_path);
  const int64_t article = static_cast<int64_t>(tok.encode(fit["examples"][0]["base_references"][0], false).size());
  const int64_t prompt = fit["examples"][0]["prompt_tokens"];
  EXPECT_LE(prompt + article + 16, 512);
  EXPECT_GE(prompt + article + 16, 512 - 4);  // the article was cut to fill the context
}

TEST(FidelityReconstruction, MalformedArticleNamesFileAndLine) {
  const std::filesystem::path root = std::filesystem::path(::testing::TempDir()) / "kvbench_fidelity_root";
  std::filesystem::create_directories(root / "cnn_dailymail");
  {
    std::ofstream out(root / "cnn_dailymail" / "cnn_dailymail_test_head.jsonl");
    out << R"({"id": "a", "article": "One. Two.", "highlights": "x"})" << "\n";
    out << R"({"id": "b", "article": 7, "highlights": "x"})" << "\n";
  }
  try {
    run_task({{"task", "fidelity/reconstruction"}, {"data_root", root.string()}, {"task_params", {{"max_new_tokens", 2}}}});
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("cnn_dailymail_test_head.jsonl:2: field 'article'"), std::string::npos) << e.what();
  }
  harness::remove_tree(root.string());  // not remove_all: see harness/file_tree.hpp
}

}  // namespace
}  // namespace kvbench::tasks
