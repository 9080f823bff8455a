// Perplexity tasks on the real model and data: the TinyStories sample reproduces the reference
// NLL recorded in ../shared/data/PROVENANCE.md, shuffled tokens are far worse, and the result
// carries the documented fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "datasets/text_reader.hpp"
#include "models/model_loader.hpp"
#include "models/perplexity.hpp"
#include "models/tokenizer.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::tasks {
namespace {

TEST(TinyStoriesTask, ReproducesTheReferenceNll) {
  nlohmann::json r = run_task({{"task", "tinystories"}, {"task_params", {{"curve", false}}}});
  // PROVENANCE.md: each story from BOS, first 512 tokens: mean NLL 1.2149 over 36,412 tokens.
  EXPECT_EQ(r["metrics"]["tokens"], 36412);  // every token after each story's BOS is scored
  EXPECT_NEAR(r["metrics"]["mean_nll"].get<double>(), 1.2149, 5e-5);
  EXPECT_EQ(r["examples"].size(), 111u);
  EXPECT_TRUE(r.contains("timings") && r.contains("memory"));
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
  nlohmann::json spec = normalize_job_spec({{"task", "tinystories"}, {"budget", "25%"}});
  EXPECT_EQ(spec["budget"], "25%");
  EXPECT_EQ(spec["model"], "stories260K");
}

TEST(RunTask, ChecksumsNameModelAndData) {
  nlohmann::json c = job_checksums({{"task", "tinystories"}});
  EXPECT_EQ(c["model"].get<std::string>().size(), 64u);
  EXPECT_EQ(c["dataset"].get<std::string>().size(), 64u);
  EXPECT_NE(c["dataset"], job_checksums({{"task", "wikitext"}})["dataset"]);
}

}  // namespace
}  // namespace kvbench::tasks
