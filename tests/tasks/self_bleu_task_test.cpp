// Self-BLEU task (BUZZ Fig. 7): BUZZ's sentence mode end to end, the samples mode's seeding, the
// prompt against the golden file, and BUZZ Table 3's perplexity preset.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "harness/file_tree.hpp"
#include "metrics/self_bleu.hpp"
#include "tasks/golden_prompts_b.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::tasks {
namespace {

// Python: [x.strip() for x in text.split(".")]
std::vector<std::string> buzz_split(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  for (;;) {
    size_t dot = text.find('.', begin);
    std::string piece = text.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
    size_t b = piece.find_first_not_of(" \t\n\r\f\v");
    out.push_back(b == std::string::npos ? "" : piece.substr(b, piece.find_last_not_of(" \t\n\r\f\v") - b + 1));
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  return out;
}

TEST(SelfBleuTask, SentenceModeScoresEachOutputsSentences) {
  nlohmann::json r = run_task({{"task", "self_bleu"}, {"limit", 2},
                               {"task_params", {{"max_new_tokens", 48}, {"record_prompts", true}}}});
  ASSERT_EQ(r["examples"].size(), 2u);
  // The reference's prompt, before the middle cut; the prompt recorded is what was fed.
  const nlohmann::json& first = r["examples"][0];
  EXPECT_EQ(first["original_prompt"].get<std::string>(), testing::golden_prompt("self_bleu_cnn_dailymail_first.txt"));
  EXPECT_LT(first["prompt"].get<std::string>().size(), first["original_prompt"].get<std::string>().size());
  EXPECT_EQ(first["prompt_tokens"].get<int64_t>(), 512 - 48);  // the model context minus max_new_tokens
  double sum = 0;
  int64_t scored = 0;
  for (const auto& e : r["examples"]) {
    const std::vector<std::string> units = buzz_split(e["prediction"].get<std::string>());
    EXPECT_EQ(e["units"].get<size_t>(), units.size());
    if (units.size() < 2) {
      EXPECT_TRUE(e["metrics"]["self_bleu"].is_null());
      continue;
    }
    const double expected = metrics::self_bleu(units, 3).mean_numpy;
    EXPECT_DOUBLE_EQ(e["metrics"]["self_bleu"].get<double>(), expected);
    sum += expected;
    ++scored;
  }
  EXPECT_EQ(r["metrics"]["scored"], scored);
  if (scored) EXPECT_DOUBLE_EQ(r["metrics"]["self_bleu"].get<double>(), sum / scored);
}

TEST(SelfBleuTask, SampleModeIsSeededAndDiverse) {
  nlohmann::json spec = {{"task", "self_bleu"}, {"limit", 1}, {"seed", 3},
                         {"task_params", {{"mode", "samples"}, {"samples", 3}, {"max_new_tokens", 24}, {"temperature", 1.0}}}};
  nlohmann::json a = run_task(spec), b = run_task(spec);
  ASSERT_EQ(a["examples"][0]["outputs"].size(), 3u);
  EXPECT_EQ(a["examples"], b["examples"]);  // same spec, same samples
  const auto& outs = a["examples"][0]["outputs"];
  EXPECT_TRUE(outs[0] != outs[1] || outs[1] != outs[2]);  // different seeds per sample
  std::vector<std::string> texts = outs.get<std::vector<std::string>>();
  EXPECT_DOUBLE_EQ(a["metrics"]["self_bleu"].get<double>(), metrics::self_bleu(texts, 3).mean_numpy);
  spec["task_params"]["ngram"] = 4;
  EXPECT_DOUBLE_EQ(run_task(spec)["metrics"]["self_bleu"].get<double>(), metrics::self_bleu(texts, 4).mean_numpy);
}

TEST(SelfBleuTask, MalformedArticleNamesFileAndLine) {
  const std::filesystem::path root = std::filesystem::path(::testing::TempDir()) / "kvbench_self_bleu_root";
  std::filesystem::create_directories(root / "cnn_dailymail");
  {
    std::ofstream out(root / "cnn_dailymail" / "cnn_dailymail_test_head.jsonl");
    out << R"({"id": "a", "article": ["not", "text"]})" << "\n";
  }
  try {
    run_task({{"task", "self_bleu"}, {"data_root", root.string()}});
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("cnn_dailymail_test_head.jsonl:1: field 'article'"), std::string::npos) << e.what();
  }
  harness::remove_tree(root.string());  // not remove_all: see harness/file_tree.hpp
}

}  // namespace
}  // namespace kvbench::tasks
