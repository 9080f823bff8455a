// XSum / CNN-DailyMail: HELM and BUZZ prompts (golden), k-shot selection, HELM's fitting rule,
// ROUGE backends and BUZZ's geometric mean end to end on stories260K, malformed data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "metrics/rouge_pltrdy.hpp"
#include "metrics/rouge_score.hpp"
#include "models/model_loader.hpp"
#include "tokenizers/tokenizer.hpp"
#include "golden_prompts_b.hpp"
#include "task_fixtures.hpp"
#include "tasks/prompt_truncation.hpp"
#include "datasets/python_random.hpp"
#include "tasks/run_task.hpp"
#include "tasks/summarization.hpp"

namespace kvbench::tasks {
namespace {

using namespace testing;

// The golden prompts are long (1-2k tokens for this tokenizer), so they are checked on the prompt
// builders the task uses; SummarizationRun checks that the task feeds exactly the builders' text.
TEST(SummarizationPrompt, HelmZeroShotIsTheH2OFilesOwnPrompt) {
  const auto docs = summarization::read_documents(shared_data("xsum/xsum_0shot.jsonl"), 1, 1);
  EXPECT_EQ(summarization::helm_prompt({}, docs[0], 1), golden("xsum_helm_0shot_0.txt"));
  EXPECT_EQ(docs[0].summary.rfind("There is a \"chronic\" need for more housing", 0), 0u);
}

TEST(SummarizationPrompt, HelmOneShotMatchesGolden) {
  const auto docs = summarization::read_documents(shared_data("xsum/xsum_0shot.jsonl"), 1, 1);
  const auto shots = summarization::read_documents(fixture("summarization/shots.jsonl"), 1);
  EXPECT_EQ(summarization::helm_prompt({&shots[0]}, docs[0], 1), golden("xsum_helm_1shot_0.txt"));
  EXPECT_EQ(summarization::helm_instruction(3), "Summarize the above article in 3 sentences.\n");
}

TEST(SummarizationPrompt, BuzzPromptMatchesGolden) {
  const auto docs = summarization::read_documents(shared_data("cnn_dailymail/cnn_dailymail_test_head.jsonl"), 3, 1);
  EXPECT_EQ(summarization::buzz_prompt(docs[0]), golden("cnn_dailymail_buzz_0.txt"));
}

TEST(SummarizationShots, SeededNeverTheDocumentItself) {
  for (size_t i = 0; i < 6; ++i) {
    const auto s = summarization::pick_shots(6, i, 5, 3);
    ASSERT_EQ(s.size(), 5u);
    EXPECT_EQ(std::set<size_t>(s.begin(), s.end()).size(), 5u);
    EXPECT_EQ(std::count(s.begin(), s.end(), i), 0);
    EXPECT_EQ(s, summarization::pick_shots(6, i, 5, 3));  // deterministic
  }
  // Documents that are not shots see the same shots (HELM's fixed train sample).
  const auto a = summarization::pick_shots(100, 99, 3, 7), b = summarization::pick_shots(100, 98, 3, 7);
  if (std::count(a.begin(), a.end(), 98) == 0) EXPECT_EQ(a, b);
  EXPECT_NE(summarization::pick_shots(100, 0, 5, 1), summarization::pick_shots(100, 0, 5, 2));
}

TEST(SummarizationRun, XsumHelmFitsTheContextAndScoresRouge) {
  nlohmann::json r = run_task({{"task", "xsum"}, {"limit", 2},
                               {"task_params", {{"style", "h2o"}, {"rouge", "google"}, {"bos", true}, {"h2o_stop_quirk", false},
                                                {"shots", 2}, {"max_new_tokens", 8}, {"record_prompts", true}}}});
  ASSERT_EQ(r["examples"].size(), 2u);
  // Both articles are too long for 504 tokens even without shots: HELM drops the shots, then cuts
  // the 0-shot prompt from the right.
  const auto docs = summarization::read_documents(shared_data("xsum/xsum_0shot.jsonl"), 1, 2);
  models::Tokenizer tok(models::load_model("stories260K").tokenizer_path);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(r["examples"][i]["prompt"].get<std::string>(), truncate_right(tok, summarization::helm_prompt({}, docs[i], 1), 504).text);
  metrics::RougeScorer scorer({"rouge1", "rouge2", "rougeL"}, /*use_stemmer=*/true);
  double r1 = 0, r2 = 0, rl = 0;
  for (const auto& e : r["examples"]) {
    EXPECT_LE(e["prompt_tokens"].get<int64_t>(), 512 - 8 + 2);  // HELM: prompt + max tokens fit the window
    EXPECT_LT(e["shots"].get<int64_t>(), 2);  // shots were dropped to fit
    EXPECT_EQ(e["prediction"].get<std::string>().find("###"), std::string::npos);
    auto s = scorer.score(e["references"][0].get<std::string>(), e["prediction"].get<std::string>());
    EXPECT_DOUBLE_EQ(e["metrics"]["rouge1"].get<double>(), s["rouge1"].fmeasure);
    EXPECT_DOUBLE_EQ(e["metrics"]["rougeL"].get<double>(), s["rougeL"].fmeasure);
    r1 += s["rouge1"].fmeasure, r2 += s["rouge2"].fmeasure, rl += s["rougeL"].fmeasure;
  }
  const auto& m = r["metrics"];
  EXPECT_DOUBLE_EQ(m["rouge1"].get<double>(), r1 / 2);
  EXPECT_DOUBLE_EQ(m["rouge_geomean"].get<double>(), std::cbrt((r1 / 2) * (r2 / 2) * (rl / 2)));
  EXPECT_EQ(r["settings"]["resolved"]["rouge"], "google (stemmer)");
}

// The shots are part of the prompt: task_params.shots_seed picks them, the job's seed does not (a
// seed axis would otherwise compare every policy on other prompts).
TEST(SummarizationRun, ShotsSeedPicksTheShotsAndTheJobSeedDoesNot) {
  auto prompts = [](uint64_t seed, int64_t shots_seed) {
    const nlohmann::json r = run_task({{"task", "xsum"}, {"limit", 2}, {"seed", seed},
                                       {"task_params", {{"max_new_tokens", 2}, {"record_prompts", true},
                                                        {"doc_max_words", 25}, {"shots_seed", shots_seed}}}});
    std::vector<std::string> out;
    for (const auto& e : r["examples"]) out.push_back(e["prompt"]);
    return out;
  };
  EXPECT_EQ(prompts(0, 0), prompts(1, 0));
  EXPECT_NE(prompts(0, 0), prompts(0, 7));
}

TEST(SummarizationRun, CnnBuzzWithPltrdyRouge) {
  nlohmann::json r = run_task({{"task", "cnn_dailymail"}, {"limit", 2},
                               {"task_params", {{"style", "buzz"}, {"max_new_tokens", 12}, {"truncation", "middle"}, {"record_prompts", true}}}});
  const auto docs = summarization::read_documents(shared_data("cnn_dailymail/cnn_dailymail_test_head.jsonl"), 3, 2);
  models::Tokenizer tok(models::load_model("stories260K").tokenizer_path);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(r["examples"][i]["prompt"].get<std::string>(), truncate_middle(tok, summarization::buzz_prompt(docs[i]), 500).text);
  EXPECT_EQ(r["settings"]["resolved"]["rouge"], "pltrdy");  // BUZZ's scorer
  for (const auto& e : r["examples"]) {
    const std::string pred = e["prediction"];
    double f = 0;
    try {
      f = metrics::pltrdy_rouge(pred, e["references"][0].get<std::string>()).rouge1.f;
    } catch (const metrics::PltrdyError&) {
    }
    EXPECT_DOUBLE_EQ(e["metrics"]["rouge1"].get<double>(), f);
    EXPECT_LE(e["prompt_tokens"].get<int64_t>(), 512 - 12 + 2);
  }
  EXPECT_EQ(r["settings"]["resolved"]["decoding"]["max_new_tokens"], 12);
}

TEST(SummarizationData, MalformedRecordsNameFileAndLine) {
  ScratchDir dir("summ_bad");
  const std::string wrapped = dir.write("x.jsonl", "{\"article\": \"Article: no header\", \"summary_gt\": \"s\"}\n");
  EXPECT_EQ(error_of([&] { run_task({{"task", "xsum"}, {"task_params", {{"data_file", wrapped}}}}); })
                .rfind(wrapped + ":1: field 'article': not in the HELM format", 0),
            0u);
  const std::string unknown = dir.write("y.jsonl", "{\"text\": \"a\"}\n");
  EXPECT_EQ(error_of([&] { run_task({{"task", "cnn_dailymail"}, {"task_params", {{"data_file", unknown}}}}); })
                .rfind(unknown + ":1: expected the fields", 0),
            0u);
  const std::string bad_type = dir.write("z.jsonl", "{\"id\": \"a\", \"article\": \"x\", \"highlights\": 5}\n");
  EXPECT_EQ(error_of([&] { run_task({{"task", "cnn_dailymail"}, {"task_params", {{"data_file", bad_type}}}}); }),
            bad_type + ":1: field 'highlights': expected a string, got number 5");
}

// CPython's random (recorded by scripts/make_tasks_b_goldens.py): HELM draws its shots with it.
TEST(PythonRandom, ReproducesCPythonsSequences) {
  const nlohmann::json g = nlohmann::json::parse(golden_prompt("python_random.json"));
  datasets::PythonRandom a(0);
  for (const auto& v : g["seed0_getrandbits32"]) EXPECT_EQ(a.getrandbits(32), v.get<uint32_t>());
  datasets::PythonRandom b(12345);
  const std::vector<uint64_t> bounds = {1, 2, 3, 10, 100, 1000, 1, 65536, 4000000000};  // the script's randrange args
  for (size_t i = 0; i < bounds.size(); ++i) EXPECT_EQ(b.randbelow(bounds[i]), g["seed12345_randrange"][i].get<uint64_t>()) << i;
  std::vector<int> x(20);
  for (int i = 0; i < 20; ++i) x[i] = i;
  datasets::PythonRandom c(7);
  c.shuffle(x);
  EXPECT_EQ(nlohmann::json(x), g["seed7_shuffle20"]);
}

// HELM's training-split draw, executed from HELM's own code on a fixture in the HF XSum layout by
// scripts/make_tasks_b_goldens.py: cleaning, the 50-150 word window, XSum's filter, sample_examples
// with random.seed(0), and the prompt with the evaluated block's instruction rstripped.
TEST(SummarizationHelm, ShotsComeFromTheTrainingSplitAsHelmDrawsThem) {
  const auto train = summarization::read_documents(fixture("summarization/xsum_train_hf.jsonl"), 1);
  summarization::ShotPoolRule rule;
  rule.xsum_filter = true;
  const auto pool = summarization::helm_training_pool(train, rule);
  const nlohmann::json expected = nlohmann::json::parse(golden_prompt("xsum_helm_train_pool.json"));
  ASSERT_EQ(pool.size(), expected["pool_articles_first_words"].size());
  for (size_t i = 0; i < pool.size(); ++i) {
    const auto words = summarization::python_split(pool[i].article);
    EXPECT_EQ(nlohmann::json(std::vector<std::string>(words.begin(), words.begin() + 4)), expected["pool_articles_first_words"][i]);
  }
  const auto picked = summarization::helm_sample_examples(pool, 3, 0);
  EXPECT_EQ(nlohmann::json(picked), expected["sampled_pool_indices"]);
  auto eval = summarization::read_documents(fixture("summarization/xsum_eval_hf.jsonl"), 1);
  for (auto& d : eval) d.article = summarization::helm_clean(d.article, 512);
  EXPECT_EQ(summarization::python_split(eval[0].article).size(), 512u);  // the 527-word article is cut
  std::vector<const summarization::Document*> shots;
  for (size_t i : picked) shots.push_back(&pool[i]);
  EXPECT_EQ(summarization::helm_prompt(shots, eval[0], 1, /*keep_newline=*/false), golden_prompt("xsum_helm_3shot_eval0.txt"));
  // Through the task: the short document's 0-shot prompt is HELM's, byte for byte.
  nlohmann::json r = run_task({{"task", "xsum"}, {"limit", 2},
                               {"task_params", {{"data_file", fixture("summarization/xsum_eval_hf.jsonl")}, {"shots", 0},
                                                {"max_new_tokens", 4}, {"record_prompts", true}}}});
  EXPECT_EQ(r["examples"][1]["prompt"].get<std::string>(), golden_prompt("xsum_helm_0shot_eval1.txt"));
  EXPECT_FALSE(r["examples"][1]["truncated"].get<bool>());
  // With the training split the task uses HELM's draw (the same shots for every document).
  nlohmann::json k = run_task({{"task", "xsum"}, {"limit", 1},
                               {"task_params", {{"data_file", fixture("summarization/xsum_eval_hf.jsonl")}, {"shots", 3},
                                                {"shots_file", fixture("summarization/xsum_train_hf.jsonl")},
                                                {"max_new_tokens", 4}}}});
  EXPECT_EQ(k["settings"]["resolved"]["shot_source"], "shots_file, HELM sample_examples");
}

TEST(SummarizationHelm, CnnArticlesAreCleanedAndCutTo512Words) {
  auto docs = summarization::read_documents(shared_data("cnn_dailymail/cnn_dailymail_test_head.jsonl"), 3, 1);
  ASSERT_GT(summarization::python_split(docs[0].article).size(), 512u);
  docs[0].article = summarization::helm_clean(docs[0].article, 512);
  EXPECT_EQ(summarization::helm_prompt({}, docs[0], 3, /*keep_newline=*/false), golden_prompt("cnn_dailymail_helm_0shot_0.txt"));
  // The task cleans the article (then HELM's right cut fits the 512-token window) and the reference.
  nlohmann::json r = run_task({{"task", "cnn_dailymail"}, {"limit", 1},
                               {"task_params", {{"shots", 0}, {"max_new_tokens", 4}, {"record_prompts", true}}}});
  models::Tokenizer tok(models::load_model("stories260K").tokenizer_path);
  EXPECT_EQ(r["examples"][0]["prompt"].get<std::string>(), truncate_right(tok, golden_prompt("cnn_dailymail_helm_0shot_0.txt"), 508).text);
  EXPECT_EQ(r["examples"][0]["references"][0].get<std::string>(), golden_prompt("cnn_dailymail_helm_0shot_0_reference.txt"));
  EXPECT_EQ(summarization::helm_clean("a\nb \t c\u00a0d  e", 0), "a b c d e");  // Python's split: NBSP is whitespace
  EXPECT_EQ(summarization::helm_clean("one two three", 2), "one two");
}

TEST(SummarizationStyles, BosFollowsTheStylesReference) {
  models::Tokenizer tok(models::load_model("stories260K").tokenizer_path);
  for (const char* style : {"h2o", "helm", "buzz"}) {
    nlohmann::json r = run_task({{"task", "xsum"}, {"limit", 1},
                                 {"task_params", {{"style", style}, {"shots", 0}, {"max_new_tokens", 2}, {"truncation", "middle"},
                                                  {"record_prompts", true}}}});
    const std::string prompt = r["examples"][0]["prompt"];
    const bool bos = std::string(style) != "h2o";  // H2O: add_special_tokens=False
    EXPECT_EQ(r["examples"][0]["prompt_tokens"].get<size_t>(), tok.encode(prompt, bos).size()) << style;
    EXPECT_EQ(r["settings"]["resolved"]["bos"].get<bool>(), bos) << style;
  }
  // H2O's request files keep the instruction's newline; HELM's adapter strips it.
  const auto docs = summarization::read_documents(shared_data("xsum/xsum_0shot.jsonl"), 1, 1);
  EXPECT_EQ(summarization::helm_prompt({}, docs[0], 1, true), golden("xsum_helm_0shot_0.txt"));
  EXPECT_EQ(summarization::helm_prompt({}, docs[0], 1, false) + "\n", golden("xsum_helm_0shot_0.txt"));
  nlohmann::json b = run_task({{"task", "xsum"}, {"limit", 1}, {"task_params", {{"style", "buzz"}, {"bos", false}, {"max_new_tokens", 2},
                                                                                   {"truncation", "middle"}}}});
  EXPECT_FALSE(b["settings"]["resolved"]["bos"].get<bool>());  // the parameter overrides the style
}

// H2O's run_summarization.py feeds request['article'] verbatim: its style does not clean the
// articles again (cleaning cuts an article longer than 512 words); HELM's does.
TEST(SummarizationStyles, H2oFeedsItsRequestFilesArticleVerbatim) {
  const auto docs = summarization::read_documents(shared_data("xsum/xsum_0shot.jsonl"), 1, 1);
  const std::string& article = docs[0].article;
  ASSERT_NE(summarization::helm_clean(article, 512), article);  // the first article has more than 512 words
  const std::string tail = article.substr(article.find_last_of(' ', article.size() - 40) + 1);
  for (const char* style : {"h2o", "helm"}) {
    nlohmann::json r = run_task({{"task", "xsum"}, {"limit", 1},
                                 {"task_params", {{"style", style}, {"shots", 0}, {"max_new_tokens", 2}, {"truncation", "middle"},
                                                  {"record_prompts", true}}}});
    const bool verbatim = std::string(style) == "h2o";
    EXPECT_EQ(r["settings"]["resolved"]["clean"].get<bool>(), !verbatim) << style;
    // The middle cut keeps the prompt's end: the raw article's last words, unless cleaning cut them.
    EXPECT_EQ(r["examples"][0]["prompt"].get<std::string>().find(tail) != std::string::npos, verbatim) << style << ": " << tail;
  }
}

}  // namespace
}  // namespace kvbench::tasks
