// Perplexity tasks on the real model and data: the TinyStories sample reproduces the reference
// NLL recorded in ../shared/data/PROVENANCE.md, shuffled tokens are far worse, and the result
// carries the documented fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "datasets/text_reader.hpp"
#include "harness/file_tree.hpp"
#include "models/model_loader.hpp"
#include "models/perplexity.hpp"
#include "tokenizers/tokenizer.hpp"
#include "golden_prompts_b.hpp"
#include "task_fixtures.hpp"
#include "tasks/perplexity_data.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::tasks {
namespace {

using namespace testing;

TEST(TinyStoriesTask, ReproducesTheReferenceNll) {
  nlohmann::json r = run_task({{"task", "tinystories"}, {"task_params", {{"curve", false}}}});
  // PROVENANCE.md: each story from BOS, first 512 tokens: mean NLL 1.2149 over 36,412 tokens.
  EXPECT_EQ(r["metrics"]["tokens"], 36412);  // every token after each story's BOS is scored
  EXPECT_NEAR(r["metrics"]["mean_nll"].get<double>(), 1.2149, 5e-5);
  EXPECT_EQ(r["examples"].size(), 111u);
  EXPECT_TRUE(r.contains("timings") && r.contains("memory"));
  // The longest story's 511 inputs (512 tokens, the last only a target) held at once: 5 layers ·
  // 4 KV heads · 511 · 8 dims · K and V · 4 bytes; the buffers grow to the prompt in one step, with
  // a position (int64) and a validity flag per slot beside the keys and values.
  EXPECT_EQ(r["memory"]["kv_logical_bytes_peak"], 5 * 4 * 511 * 8 * 2 * 4);
  EXPECT_EQ(r["memory"]["kv_allocated_bytes_peak"], 5 * 4 * 511 * (8 * 2 * 4 + 8 + 1));
}

TEST(TinyStoriesTask, ShuffledTokensAreFarWorse) {
  models::LoadedModel loaded = models::load_model("stories260K");
  models::Transformer model(loaded.config, loaded.weights);
  models::Tokenizer tok(loaded.tokenizer_path);
  auto stories = datasets::read_tinystories(std::string(KVBENCH_SHARED_DIR) + "/data/tinystories/TinyStories-valid.head.txt");
  std::vector<int> ids = tok.encode(stories[0] + "\n" + stories[1], true);
  ids.resize(std::min<size_t>(ids.size(), 400));
  std::vector<int64_t> tokens(ids.begin(), ids.end());
  std::vector<int64_t> shuffled = tokens;
  std::mt19937_64 rng(1);
  std::shuffle(shuffled.begin() + 1, shuffled.end(), rng);
  models::InferenceSession a(model, nullptr, {}), b(model, nullptr, {});
  const double real = models::evaluate_perplexity(a, tokens).perplexity;
  const double mixed = models::evaluate_perplexity(b, shuffled).perplexity;
  EXPECT_LT(real, 6.0);
  EXPECT_GT(mixed, 20 * real);
}

TEST(RunTask, RejectsUnknownFieldsAndTasks) {
  EXPECT_THROW(normalize_job_spec({{"task", "tinystories"}, {"budgett", "10"}}), std::invalid_argument);
  EXPECT_THROW(normalize_job_spec({{"task", "no-such-task"}}), std::invalid_argument);
  EXPECT_THROW(normalize_job_spec({{"task", "tinystories"}, {"policy", "full"}, {"policy_params", {{"x", 1}}}}),
               std::invalid_argument);
  // Counts are integers in range: 2.7 or 1e30 would be truncated into another job's numbers.
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"seed", 2.7}, {"seed", -1}, {"seed", 1e19}, {"limit", 1.5}, {"limit", 1e30},
           {"limit", 9223372036854775808ull}, {"block", 0}, {"block", -3}}) {
    const std::string error = error_of([&] { normalize_job_spec({{"task", "tinystories"}, {field, value}}); });
    EXPECT_NE(error.find("field '" + field + "' must be an integer >= "), std::string::npos) << value << ": " << error;
  }
  EXPECT_EQ(normalize_job_spec({{"task", "tinystories"}, {"seed", 18446744073709551615ull}})["seed"], 18446744073709551615ull);
  nlohmann::json spec = normalize_job_spec({{"task", "tinystories"}, {"budget", "25%"}});
  EXPECT_EQ(spec["budget"], "25%");
  EXPECT_EQ(spec["model"], "stories260K");
}

TEST(RunTask, APerplexityParameterTheModeNeverReadsIsRefused) {
  // max_tokens in mode documents once scored the whole stories, as if it were not there.
  auto error = [](const nlohmann::json& task_params, const std::string& task = "tinystories") {
    return error_of([&] { normalize_job_spec({{"task", task}, {"task_params", task_params}}); });
  };
  EXPECT_EQ(error({{"max_tokens", 5}}),
            "tinystories: task_params.max_tokens is not read in mode documents (only in rows, sliding, stream)");
  EXPECT_EQ(error({{"mode", "stream"}, {"stride", 3}}),
            "tinystories: task_params.stride is not read in mode stream (only in sliding)");
  EXPECT_EQ(error({{"preset", "buzz_table3"}, {"per_document", true}}, "wikitext"),
            "wikitext: task_params.per_document is not read in mode rows (only in stream)");
  EXPECT_NE(error({{"books", "all"}}).find("field 'books' is not a parameter of task 'tinystories'"), std::string::npos);
  EXPECT_NE(error({{"rows", 3}}, "pg19").find("field 'rows' is not a parameter of task 'pg19'"), std::string::npos);
  EXPECT_EQ(error({{"mode", "stream"}, {"max_tokens", 5}, {"per_document", false}}), "(no error)");
  EXPECT_EQ(error({{"mode", "sliding"}, {"max_length", 64}, {"stride", 32}, {"max_tokens", 100}}, "wikitext"), "(no error)");
}

TEST(RunTask, ChecksumsNameModelAndData) {
  nlohmann::json c = job_checksums({{"task", "tinystories"}});
  EXPECT_EQ(c["model"].get<std::string>().size(), 64u);
  EXPECT_EQ(c["dataset"].get<std::string>().size(), 64u);
  EXPECT_NE(c["dataset"], job_checksums({{"task", "wikitext"}})["dataset"]);
}

TEST(RunTask, AFolderAsTheTextFileOfTinyStoriesOrWikitextIsOneClearError) {
  // An empty folder once made TinyStories read the first of no files (a segfault that took a
  // whole grid's workers down); a folder of .txt files read only its first. Folders are PG19's.
  const std::filesystem::path root = std::filesystem::path(::testing::TempDir()) / "kvbench_folder_as_text";
  std::filesystem::create_directories(root / "stories.txt");
  for (const char* task : {"tinystories", "wikitext"}) {
    const std::string error = error_of([&] {
      run_task({{"task", task}, {"data_root", root.string()}, {"task_params", {{"data_file", "stories.txt"}}}});
    });
    EXPECT_NE(error.find("stories.txt: the text file must be a regular file, this is a directory"), std::string::npos)
        << task << ": " << error;
  }
  harness::remove_tree(root.string());  // not remove_all: see harness/file_tree.hpp
}

// Hugging Face's wikitext loader yields the lines of wiki.*.raw with their "\n"; blank ones as "".
TEST(WikitextRows, AreTheLinesOfTheRawFile) {
  const auto rows = perplexity_data::read_wikitext_rows(shared_data("wikitext/wiki.test.raw"));
  const std::string raw = datasets::read_text(shared_data("wikitext/wiki.test.raw"));
  EXPECT_EQ(rows.size(), static_cast<size_t>(std::count(raw.begin(), raw.end(), '\n')));
  ASSERT_GT(rows.size(), 3u);
  EXPECT_EQ(rows[0], "");
  EXPECT_EQ(rows[1], " = Robert Boulter = \n");
  EXPECT_EQ(rows[2], "");
  EXPECT_EQ(rows[3].rfind(" Robert Boulter is an English film , television and theatre actor", 0), 0u);
  ScratchDir dir("wikitext_rows");
  EXPECT_EQ(perplexity_data::read_wikitext_rows(dir.write("r.raw", "a\r\n \r\nb")), (std::vector<std::string>{"a\n", "", "b"}));
  EXPECT_EQ(perplexity_data::read_wikitext_rows(dir.write("r.jsonl", "{\"text\": \"\"}\n{\"text\": \" x \\n\"}\n")),
            (std::vector<std::string>{"", " x \n"}));
}

// BUZZ eval_long_ppl.py, written out as its loop: every row from its own BOS, one cache across
// rows, token idx fed to predict idx + 1 for idx < seq_len - 1.
TEST(WikitextRows, BuzzTable3CarriesTheCacheAcrossRowsAndNeverFeedsALastToken) {
  const int rows = 8;  // rows 0 and 2 are empty: they feed nothing
  nlohmann::json r = run_task({{"task", "wikitext"}, {"policy", "full"}, {"budget", "full"}, {"protocol", "stream"},
                               {"task_params", {{"preset", "buzz_table3"}, {"rows", rows}, {"curve", true}}}});
  models::LoadedModel loaded = models::load_model("stories260K");
  models::Transformer model(loaded.config, loaded.weights);
  models::Tokenizer tok(loaded.tokenizer_path);
  const auto text = perplexity_data::read_wikitext_rows(shared_data("wikitext/wiki.test.raw"));
  models::InferenceSession carried(model, nullptr, {});
  std::vector<double> nll, fresh_nll;
  bool first = true;
  for (int i = 0; i < rows; ++i) {
    const std::vector<int> ids = tok.encode(text[i], true);
    models::InferenceSession fresh(model, nullptr, {});
    for (size_t idx = 0; idx + 1 < ids.size(); ++idx) {
      torch::Tensor logits = first ? carried.prefill({ids[idx]}).reshape({-1}) : carried.step(ids[idx]);
      first = false;
      nll.push_back(-torch::log_softmax(logits.to(torch::kFloat64), 0)[ids[idx + 1]].item<double>());
      torch::Tensor f = idx == 0 ? fresh.prefill({ids[idx]}).reshape({-1}) : fresh.step(ids[idx]);
      fresh_nll.push_back(-torch::log_softmax(f.to(torch::kFloat64), 0)[ids[idx + 1]].item<double>());
    }
  }
  ASSERT_EQ(r["metrics"]["tokens"].get<size_t>(), nll.size());
  const auto curve = r["examples"][0]["nll_curve"].get<std::vector<double>>();
  for (size_t i = 0; i < nll.size(); ++i) EXPECT_NEAR(curve[i], nll[i], 1e-6) << i;
  double mean = 0, fresh_mean = 0;
  for (size_t i = 0; i < nll.size(); ++i) mean += nll[i] / nll.size(), fresh_mean += fresh_nll[i] / nll.size();
  EXPECT_NEAR(r["metrics"]["perplexity"].get<double>(), std::exp(mean), 1e-6 * std::exp(mean));
  EXPECT_GT(std::abs(mean - fresh_mean), 1e-3);  // a fresh cache per row is a different protocol
  EXPECT_EQ(r["metrics"]["rows"], rows);
  // The preset refuses what BUZZ did not run.
  EXPECT_NE(error_of([] { run_task({{"task", "wikitext"}, {"protocol", "oneshot"}, {"task_params", {{"preset", "buzz_table3"}}}}); })
                .find("protocol \"stream\""),
            std::string::npos);
}

// cascade/dataset/pg19.py's subset rule, executed on lengths with ties by scripts/make_tasks_b_goldens.py.
TEST(Pg19Books, CascadeSelectionIsTheReferencesSortedSlice) {
  const nlohmann::json g = nlohmann::json::parse(golden_prompt("pg19_cascade_selection.json"));
  const auto picked = perplexity_data::cascade_pg19_selection(g["lengths"].get<std::vector<int64_t>>());
  EXPECT_EQ(nlohmann::json(picked), g["selected"]);
  EXPECT_EQ(picked.size(), 25u);
  EXPECT_NE(error_of([] { perplexity_data::cascade_pg19_selection(std::vector<int64_t>(43, 1)); }).find("at least 44 books"),
            std::string::npos);
}

TEST(Pg19Books, EachBookOfADataDirStreamsFromItsOwnBos) {
  ScratchDir dir("pg19_books");
  const auto stories = datasets::read_tinystories(shared_data("tinystories/TinyStories-valid.head.txt"));
  // 45 books whose lengths grow with their number (book-07 has 8 stories): the Cascade rule picks
  // the books ranked 20..43 by length, then the one ranked 19.
  for (int b = 0; b < 45; ++b) {
    std::string text;
    const int n = (b * 17) % 45;  // a permutation of 0..44: the rank of book b
    for (int k = 0; k <= n / 9; ++k) text += stories[k] + "\n";
    for (int w = 0; w < n; ++w) text += " the";  // strictly longer with n inside a block of 9
    char name[16];
    std::snprintf(name, sizeof name, "book-%02d.txt", b);
    dir.write(name, text);
  }
  nlohmann::json r = run_task({{"task", "pg19"}, {"policy", "full"}, {"budget", "full"}, {"protocol", "stream"},
                               {"task_params", {{"data_dir", dir.path()}, {"max_tokens", 6}, {"curve", false}}}});
  ASSERT_EQ(r["examples"].size(), 25u);
  std::vector<std::string> expected;
  for (int rank : {20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 19})
    for (int b = 0; b < 45; ++b)
      if ((b * 17) % 45 == rank) {
        char name[16];
        std::snprintf(name, sizeof name, "book-%02d", b);
        expected.push_back(name);
      }
  for (size_t i = 0; i < 25; ++i) EXPECT_EQ(r["examples"][i]["id"], expected[i]) << i;
  // Each book restarts from BOS: the first scored token of every book is scored from BOS alone.
  models::LoadedModel loaded = models::load_model("stories260K");
  models::Transformer model(loaded.config, loaded.weights);
  models::Tokenizer tok(loaded.tokenizer_path);
  const std::string book = datasets::read_text(dir.path() + "/" + expected[0] + ".txt");
  std::vector<int> ids = tok.encode(book, true);
  std::vector<int64_t> first(ids.begin(), ids.begin() + 6);
  models::InferenceSession s(model, nullptr, {});
  EXPECT_NEAR(r["examples"][0]["metrics"]["mean_nll"].get<double>(), models::evaluate_perplexity(s, first).mean_nll, 1e-6);
  // The staged folder holds one book twice (raw and body): too few for the rule, fine with books=all.
  const std::string staged = shared_data("pg19");
  EXPECT_NE(error_of([&] { run_task({{"task", "pg19"}, {"task_params", {{"data_dir", staged}, {"max_tokens", 4}}}}); })
                .find("at least 44 books"),
            std::string::npos);
  nlohmann::json all = run_task({{"task", "pg19"}, {"task_params", {{"data_dir", staged}, {"books", "all"}, {"max_tokens", 4}, {"curve", false}}}});
  EXPECT_EQ(all["examples"].size(), 2u);
  EXPECT_EQ(all["metrics"]["tokens"], 6);  // 3 scored tokens per book, each book from its own BOS
}

}  // namespace
}  // namespace kvbench::tasks
