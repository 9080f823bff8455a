// The baselines on the real model (stories260K: 5 layers, 8 query / 4 KV heads, trained context
// 512). TinyStories validation stories are concatenated into one stream far longer than the
// context and scored token by token under eviction (the stream protocol, block 1):
//  - StreamingLLM (4 sinks + window, positions inside the cache) stays at in-context perplexity;
//  - Full (no eviction) breaks beyond the trained positions (relative distances it never saw:
//    mildly up to ~2K, badly after), and so does StreamingLLM with original positions, whose
//    sinks drift ever further from the query;
//  - Local (the window alone) stays bounded too on this model: RoPE scores depend only on relative
//    positions, which a window keeps small, and stories260K shows no attention-sink collapse (at
//    small budgets the sinks even cost it: docs/policies-baselines.md). So with a window-only cache,
//    positions inside the cache and original positions must give the same NLL — a check of the
//    cache_slot rotation itself.
// The 20,000-token numbers come from the CLI (docs/policies-baselines.md); this test streams
// kStreamTokens (6x the context) with a small budget to stay fast.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numeric>

#include "datasets/text_reader.hpp"
#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "models/perplexity.hpp"
#include "tokenizers/tokenizer.hpp"
#include "models/transformer.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

constexpr int64_t kStreamTokens = 3072;
constexpr int64_t kBudget = 64;
constexpr int64_t kContext = 512;

class BaselineStreaming : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new models::LoadedModel(models::load_model("stories260K"));
    model_ = new models::Transformer(loaded_->config, loaded_->weights);
    models::Tokenizer tokenizer(loaded_->tokenizer_path);
    const auto stories =
        datasets::read_tinystories(std::string(KVBENCH_SHARED_DIR) + "/data/tinystories/TinyStories-valid.head.txt");
    std::string text;
    for (const auto& s : stories) text += s + "\n";
    std::vector<int> ids = tokenizer.encode(text, /*add_bos=*/true);
    tokens_ = new std::vector<int64_t>(ids.begin(), ids.end());
  }
  static void TearDownTestSuite() {
    delete tokens_;
    delete model_;
    delete loaded_;
  }

  static models::PerplexityResult stream(const std::string& policy_name, const nlohmann::json& params, int64_t length,
                                         models::Protocol protocol = models::Protocol::kStream) {
    auto policy = make_policy(policy_name, params);
    models::SessionOptions options;
    options.protocol = protocol;
    options.block = 1;
    options.budget = policy_name == "full" ? Budget::unlimited() : Budget::tokens(kBudget);
    models::InferenceSession session(*model_, policy.get(), options);
    std::vector<int64_t> tokens(tokens_->begin(), tokens_->begin() + length);
    return models::evaluate_perplexity(session, tokens);
  }
  // Mean NLL of the tokens at positions [from, to) (nll[i] predicts token i + 1).
  static double mean_nll(const models::PerplexityResult& r, int64_t from, int64_t to) {
    return std::accumulate(r.nll.begin() + from - 1, r.nll.begin() + to - 1, 0.0) / static_cast<double>(to - from);
  }

  static models::LoadedModel* loaded_;
  static models::Transformer* model_;
  static std::vector<int64_t>* tokens_;
};
models::LoadedModel* BaselineStreaming::loaded_ = nullptr;
models::Transformer* BaselineStreaming::model_ = nullptr;
std::vector<int64_t>* BaselineStreaming::tokens_ = nullptr;

TEST_F(BaselineStreaming, TheStoriesMakeAStreamFarBeyondTheContext) {
  EXPECT_GT(static_cast<int64_t>(tokens_->size()), 20000);
  EXPECT_GE(kStreamTokens, 6 * kContext);
}

TEST_F(BaselineStreaming, StreamingLlmStaysBoundedWhereFullBreaks) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto full = stream("full", nlohmann::json::object(), kStreamTokens, models::Protocol::kOneShot);
  const auto sink = stream("streaming_llm", nlohmann::json::object(), kStreamTokens);
  const auto local = stream("local", nlohmann::json::object(), kStreamTokens);
  const auto sink_original = stream("streaming_llm", {{"positions", "original"}}, kStreamTokens);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const int64_t late = 4 * kContext;  // positions [2048, end): far from the start
  const double full_in = mean_nll(full, 1, kContext), full_out = mean_nll(full, late, kStreamTokens);
  const double sink_out = mean_nll(sink, late, kStreamTokens);
  const double local_out = mean_nll(local, late, kStreamTokens);
  const double original_out = mean_nll(sink_original, late, kStreamTokens);
  std::cout << "stream of " << kStreamTokens << " tokens, budget " << kBudget << " (" << seconds << " s)\n"
            << "  mean NLL, positions [1, 512):   full " << full_in << "\n"
            << "  mean NLL, positions [2048, end): full " << full_out << ", streaming_llm " << sink_out
            << ", streaming_llm(original positions) " << original_out << ", local " << local_out << "\n";

  EXPECT_EQ(sink.max_cache_len, kBudget);
  EXPECT_EQ(local.max_cache_len, kBudget);
  // StreamingLLM stays near the in-context quality of the full cache...
  EXPECT_LT(sink_out, full_in + 0.3);
  // ...while Full breaks beyond the trained positions, and so do the sinks at original positions.
  EXPECT_GT(full_out, full_in + 2.0);
  EXPECT_GT(original_out, sink_out + 1.0);
  // Local: bounded too on this model (no sink effect at this scale).
  EXPECT_LT(local_out, full_in + 0.3);
}

TEST_F(BaselineStreaming, WindowOnlyCacheIsTheSameAtCacheSlotAndOriginalPositions) {
  const int64_t length = 768;
  const auto original = stream("local", {{"positions", "original"}}, length);
  const auto slots = stream("local", {{"positions", "cache_slot"}}, length);
  double worst = 0;
  for (size_t i = 0; i < original.nll.size(); ++i) worst = std::max(worst, std::abs(original.nll[i] - slots.nll[i]));
  EXPECT_LT(worst, 1e-3);
  // Sinks change that: their distance to the query differs between the two modes.
  const auto sink_original = stream("streaming_llm", {{"positions", "original"}}, length);
  const auto sink_slots = stream("streaming_llm", nlohmann::json::object(), length);
  EXPECT_GT(std::abs(mean_nll(sink_original, 600, length) - mean_nll(sink_slots, 600, length)), 1e-4);
}

TEST_F(BaselineStreaming, GqaCacheStoresKvHeadsOnly) {
  for (const char* name : {"h2o", "snapkv", "adakv", "tova", "streaming_llm"}) {
    // snapkv/adakv default to gqa repeat (query heads stored, policy_parity_test); here: reduce.
    const bool repeats = std::string(name) == "snapkv" || std::string(name) == "adakv";
    auto policy = make_policy(name, repeats ? nlohmann::json{{"gqa", "reduce"}} : nlohmann::json::object());
    models::SessionOptions options;
    options.protocol = models::Protocol::kStream;
    options.block = 16;
    options.budget = Budget::tokens(48);
    models::InferenceSession session(*model_, policy.get(), options);
    std::vector<int64_t> tokens(tokens_->begin(), tokens_->begin() + 200);
    session.prefill(tokens);
    EXPECT_EQ(loaded_->config.n_heads, 8);
    EXPECT_EQ(loaded_->config.n_kv_heads, 4);
    for (int64_t l = 0; l < session.cache().n_layers(); ++l) {
      const LayerCache& layer = session.cache().layer(l);
      EXPECT_EQ(layer.kv_heads(), 4) << name;
      EXPECT_EQ(layer.keys().size(0), 4) << name;
      EXPECT_EQ(layer.values().size(0), 4) << name;
      EXPECT_LE(layer.logical_bytes(), 2 * 4 * 48 * layer.head_dim() * 4) << name;  // the layer total: H·B
    }
  }
}

}  // namespace
}  // namespace kvbench::policies
