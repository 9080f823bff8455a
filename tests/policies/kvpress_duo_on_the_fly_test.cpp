// kvpress:duo_attention_on_the_fly against kvpress's own duo_attention_on_the_fly, recorded on the
// tiny random Qwen3 checkpoint tests/fixtures/qwen3_reference and a corpus in BookSum's shape
// (scripts/policy_parity/kvpress_duo_on_the_fly.py): the chapters pandas' sample picks, the tokens
// fed, every (layer, KV head) score, and the streaming heads a session then evicts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "datasets/python_random.hpp"
#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "tokenizers/tokenizer.hpp"
#include "models/transformer.hpp"
#include "parity_fixture.hpp"
#include "qwen3_reference_checkpoint.hpp"
#include "policies/keep_scored.hpp"
#include "policies/kvpress/duo_on_the_fly.hpp"
#include "tasks/kvpress_prompt.hpp"

namespace kvbench::policies {
namespace {

namespace fs = std::filesystem;
using parity::json;

const json& duo_fixture() {
  static const json f = parity::load_fixture("kvpress_duo_on_the_fly.json");
  return f;
}
std::string duo_corpus_path() { return (fs::path(KVBENCH_TESTS_DIR) / "fixtures" / duo_fixture()["reference"]["corpus"].get<std::string>()).string(); }

// What a forward gives the policy: each layer's projections and its RoPE.
class ProjectionCapture : public Policy {
 public:
  std::string name() const override { return "capture"; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.projections = true;
    return r;
  }
  void observe(int64_t layer, LayerCache&, const AttentionStats& stats, Phase) override {
    if (static_cast<int64_t>(seen.size()) <= layer) seen.resize(layer + 1);
    seen[layer] = stats;
  }
  void compress(int64_t, LayerCache&, Phase) override {}
  std::vector<AttentionStats> seen;
};


TEST(NumpyRandomState, ChoiceWithoutReplacementIsNumpysPermutationPrefix) {
  const json& draws = duo_fixture()["reference"]["numpy_choice"];
  ASSERT_GE(draws.size(), 5u);
  for (const json& d : draws) {
    datasets::NumpyRandomState rng(d["seed"].get<uint32_t>());
    EXPECT_EQ(json(rng.choice_without_replacement(d["n"], d["k"])), d["choice"]) << d["seed"] << " " << d["n"] << " " << d["k"];
  }
}

TEST(KvpressDuoOnTheFly, ScoresEqualKvpressOnTheQwen3Checkpoint) {
  const auto& c = kvbench::testing::qwen3_reference_checkpoint();
  const json& cases = duo_fixture()["cases"];
  ASSERT_EQ(cases.size(), 3u);
  std::vector<std::string> rows;
  {
    std::ifstream in(duo_corpus_path());
    for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line)["chapter"]);
  }
  for (const json& cs : cases) {
    const int64_t num_samples = cs["num_samples"], q_len = cs["q_len"];
    SCOPED_TRACE("num_samples " + std::to_string(num_samples) + ", q_len " + std::to_string(q_len));
    const std::vector<std::string> chapters = kvpress::duo_sampled_chapters(duo_corpus_path(), num_samples);
    ASSERT_EQ(chapters.size(), cs["sampled_rows"].size());
    for (size_t i = 0; i < chapters.size(); ++i) EXPECT_EQ(chapters[i], rows.at(cs["sampled_rows"][i].get<size_t>())) << "sample " << i;
    const int64_t L = c.model.config().n_layers, KV = c.model.config().n_kv_heads;
    torch::Tensor scores = torch::zeros({L, KV});
    for (size_t i = 0; i < chapters.size(); ++i) {
      const std::vector<int> ids = c.tokenizer.encode(chapters[i], /*add_special_tokens=*/true);
      const std::vector<int64_t> tokens(ids.begin(), ids.end());
      ASSERT_EQ(json(tokens), cs["token_ids"][i]) << "chapter " << i << ": the tokens fed";
      ProjectionCapture capture;
      KVCache cache = c.model.make_cache(PositionMode::kOriginal);
      models::CacheControl control;
      control.policy = &capture;
      c.model.forward(tokens, 0, cache, control, false);
      for (int64_t l = 0; l < L; ++l)
        scores[l] += kvpress::duo_layer_scores(capture.seen[l].projected_queries, capture.seen[l].projected_keys, capture.seen[l].rotate, q_len) /
                     static_cast<double>(num_samples);
    }
    torch::Tensor expected = torch::zeros({L, KV});
    for (int64_t l = 0; l < L; ++l)
      for (int64_t h = 0; h < KV; ++h) expected[l][h] = cs["scores"][l][h].get<double>();
    EXPECT_TRUE(torch::allclose(scores, expected, 0, 2e-6)) << "ours\n" << scores << "\nkvpress\n" << expected;
  }
}

// Through a session: the calibration chapters run first, each on its own, then the prompt; the
// lowest-scored heads keep sink + recent tokens, the others all. kvpress's sink 128 and recent 256
// are parameters so the tiny checkpoint's short prompt shows the eviction.
TEST(KvpressDuoOnTheFly, ASessionEvictsTheHeadsKvpressMakesStreaming) {
  const auto& c = kvbench::testing::qwen3_reference_checkpoint();
  const json& defaults = duo_fixture()["cases"][0];
  ASSERT_EQ(defaults["sink_size"], 128);
  ASSERT_EQ(defaults["recent_size"], 256);
  const std::vector<int> ids = c.tokenizer.encode("Once upon a time there was a little girl named Lily. She liked to play in the park with her dog.", true);
  const std::vector<int64_t> prompt(ids.begin(), ids.end());
  const int64_t n = static_cast<int64_t>(prompt.size()), sink = 3, recent = 5, KV = c.model.config().n_kv_heads;
  ASSERT_GT(n, sink + recent);
  for (const auto& [ratio, streaming] : defaults["streaming"].items()) {
    SCOPED_TRACE("head_compression_ratio " + ratio);
    auto policy = make_policy("kvpress:duo_attention_on_the_fly", {{"corpus", duo_corpus_path()}, {"head_compression_ratio", std::stod(ratio)},
                                                                   {"sink_size", sink}, {"recent_size", recent}});
    models::SessionOptions options;
    options.text = tasks::model_prompt_text(c.tokenizer);
    models::InferenceSession session(c.model, policy.get(), options), full(c.model, nullptr, models::SessionOptions{});
    EXPECT_TRUE(torch::equal(session.prefill(prompt), full.prefill(prompt))) << "the calibration leaves the prompt's forward as it was";
    EXPECT_EQ(session.next_position(), n);
    std::set<int64_t> want;
    for (const json& flat : streaming) want.insert(flat.get<int64_t>());
    for (int64_t l = 0; l < c.model.config().n_layers; ++l) {
      const torch::Tensor counts = valid_counts(session.cache().layer(l));
      for (int64_t h = 0; h < KV; ++h)
        EXPECT_EQ(counts[h].item<int64_t>(), want.count(l * KV + h) ? sink + recent : n) << "layer " << l << ", KV head " << h;
    }
  }
}

// Every example's session has a policy of its own: the calibration runs once per (model, corpus,
// num_samples, q_len) in the process, as kvpress caches its scores per model. It runs on a cache of
// its own: the prompt's peaks are as without it.
TEST(KvpressDuoOnTheFly, TheCalibrationRunsOncePerModelAndCorpus) {
  const auto& c = kvbench::testing::qwen3_reference_checkpoint();
  const std::vector<int> ids = c.tokenizer.encode("Lily ran.", true);
  const std::vector<int64_t> prompt(ids.begin(), ids.end());
  const json params = {{"corpus", duo_corpus_path()}, {"num_samples", 3}, {"q_len", 17}};
  const auto text = tasks::model_prompt_text(c.tokenizer);
  auto first = make_policy("kvpress:duo_attention_on_the_fly", params);
  models::SessionOptions options;
  options.text = text;
  models::InferenceSession session(c.model, first.get(), options), full(c.model, nullptr, models::SessionOptions{});
  session.prefill(prompt);
  full.prefill(prompt);
  EXPECT_EQ(session.max_cache_len(), full.max_cache_len()) << "the chapters' cache is not the prompt's";
  EXPECT_EQ(session.peak_logical_bytes(), full.peak_logical_bytes());
  // A fresh policy of the same model and calibration asks for no forward; another calibration, or a
  // model without a checkpoint to name it, does.
  SequenceInfo info;
  info.n_layers = c.model.config().n_layers, info.n_heads = c.model.config().n_heads, info.n_kv_heads = c.model.config().n_kv_heads;
  info.head_dim = c.model.config().head_dim, info.prompt_len = static_cast<int64_t>(prompt.size()), info.budget = kUnlimitedTokens;
  info.model = c.model.config().origin + "|Float|cpu";  // as the session names it
  auto inputs_of = [&](const json& p, const std::string& model) {
    auto policy = make_policy("kvpress:duo_attention_on_the_fly", p);
    SequenceInfo i = info;
    i.model = model;
    policy->begin(i);
    return policy->rescoring()->scoring_inputs(prompt, text.get()).size();
  };
  EXPECT_EQ(inputs_of(params, info.model), 0u);
  json other = params;
  other["num_samples"] = 4;
  EXPECT_EQ(inputs_of(other, info.model), 4u);
  EXPECT_EQ(inputs_of(params, ""), 3u);
}

TEST(KvpressDuoOnTheFly, ACalibrationWithoutTheTokenizerIsOneClearError) {
  const auto& c = kvbench::testing::qwen3_reference_checkpoint();
  auto policy = make_policy("kvpress:duo_attention_on_the_fly", {{"corpus", duo_corpus_path()}, {"num_samples", 2}, {"q_len", 9}});
  models::InferenceSession bare(c.model, policy.get(), models::SessionOptions{});  // no SessionOptions::text
  EXPECT_THROW(bare.prefill({1, 300, 301, 302}), std::invalid_argument);
}

TEST(KvpressDuoOnTheFly, ACorpusIsNamedWhenMissing) {
  std::string what;
  try {
    make_policy("kvpress:duo_attention_on_the_fly", json::object());
  } catch (const std::invalid_argument& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("kmfoda/booksum"), std::string::npos) << what;
  EXPECT_NE(what.find("corpus"), std::string::npos) << what;
}

}  // namespace
}  // namespace kvbench::policies
