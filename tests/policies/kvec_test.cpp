// K-VEC on constructed window attention: the window is kept, the top β·B by the original score are
// forced, cross-layer coverage steers later layers to tokens earlier layers dropped, and the
// cross-head rescoring touches only the least focused heads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <set>

#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "tokenizers/tokenizer.hpp"
#include "models/transformer.hpp"
#include "policies/forwarding_policy.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

SequenceInfo kvec_info(int64_t layers, int64_t heads, int64_t budget, int64_t prompt) {
  SequenceInfo info;
  info.n_layers = layers; info.n_heads = heads; info.n_kv_heads = heads; info.head_dim = 2;
  info.budget = budget; info.prompt_len = prompt;
  return info;
}

LayerCache filled_cache(int64_t heads, int64_t n) {
  LayerCache cache(heads, 2, torch::kFloat32);
  torch::Tensor k = torch::randn({heads, n, 2});
  cache.append(k, k.clone(), torch::arange(n, torch::kInt64));
  return cache;
}

std::set<int64_t> kept_positions(const LayerCache& cache, int64_t head) {
  std::set<int64_t> out;
  for (int64_t j = 0; j < cache.size(); ++j) out.insert(cache.positions()[head][j].item<int64_t>());
  return out;
}

// Window rows where every query gives weight `w[t]` to token t (normalisation is irrelevant here).
AttentionStats rows_from(const std::vector<float>& w, int64_t heads, int64_t rows) {
  AttentionStats s;
  torch::Tensor r = torch::tensor(w).reshape({1, 1, -1}).expand({heads, rows, (int64_t)w.size()}).clone();
  s.window_rows = r;
  return s;
}

TEST(Kvec, KeepsWindowAndForcesTopBetaB) {
  auto policy = make_policy("kvec", {{"window", 2}, {"wide_window", 2}, {"pooling", "none"}, {"beta", 0.25},
                                     {"lambda", 100.0}, {"head_coverage", false}});
  policy->begin(kvec_info(1, 1, 6, 12));
  LayerCache cache = filled_cache(1, 12);
  // Token 3 has the largest original score; λ·focus is huge but coverage is 0 at layer 0, so
  // focus = I (same ranking); make token 3 win by P but lose by I: impossible with one head —
  // instead check it is among the kept and the window (10, 11) is kept.
  std::vector<float> w = {0.01f, 0.02f, 0.03f, 0.9f, 0.05f, 0.04f, 0.06f, 0.01f, 0.02f, 0.03f, 0.5f, 0.5f};
  policy->observe(0, cache, rows_from(w, 1, 2), Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  ASSERT_EQ(cache.size(), 6);
  std::set<int64_t> kept = kept_positions(cache, 0);
  EXPECT_TRUE(kept.count(10) && kept.count(11));
  EXPECT_TRUE(kept.count(3));
  EXPECT_EQ(kept, (std::set<int64_t>{3, 4, 5, 6, 10, 11}));
}

TEST(Kvec, LiteralOneOfEq16DoesNotProtectWhenFocusIsLarge) {
  auto policy = make_policy("kvec", {{"window", 2}, {"wide_window", 2}, {"pooling", "none"}, {"beta", 0.25},
                                     {"lambda", 100.0}, {"head_coverage", false}, {"force_literal_one", true}});
  policy->begin(kvec_info(1, 1, 6, 12));
  LayerCache cache = filled_cache(1, 12);
  std::vector<float> w = {0.01f, 0.02f, 0.03f, 0.9f, 0.05f, 0.04f, 0.06f, 0.01f, 0.02f, 0.03f, 0.5f, 0.5f};
  policy->observe(0, cache, rows_from(w, 1, 2), Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_FALSE(kept_positions(cache, 0).count(3));
}

TEST(Kvec, LayerCoverageSteersLaterLayersToUncoveredTokens) {
  std::vector<float> w = {0.30f, 0.29f, 0.28f, 0.27f, 0.26f, 0.25f, 0.24f, 0.23f, 0.5f, 0.5f};
  auto run = [&](bool coverage) {
    auto policy = make_policy("kvec", {{"window", 2}, {"wide_window", 2}, {"pooling", "none"}, {"beta", 0.0},
                                       {"lambda", 1.0}, {"head_coverage", false}, {"layer_coverage", coverage}});
    policy->begin(kvec_info(2, 1, 5, 10));
    std::set<int64_t> all;
    for (int64_t layer = 0; layer < 2; ++layer) {
      LayerCache cache = filled_cache(1, 10);
      policy->observe(layer, cache, rows_from(w, 1, 2), Phase::kPrefill);
      policy->compress(layer, cache, Phase::kPrefill);
      for (int64_t p : kept_positions(cache, 0)) all.insert(p);
    }
    return all.size();
  };
  // Without coverage both layers keep {0,1,2} + window; with it layer 1 prefers tokens 3..5.
  EXPECT_EQ(run(false), 5u);
  EXPECT_GT(run(true), 5u);
}

TEST(Kvec, CrossHeadRescoresOnlyTheLeastFocusedHeads) {
  // Head 0 is peaked (high std), head 1 flat over the last O rows but peaked on token 1 in the
  // wider window. With δ = 1 only head 1 is rescored with O', so it keeps token 1.
  auto policy = make_policy("kvec", {{"window", 1}, {"wide_window", 3}, {"delta", 1}, {"pooling", "none"},
                                     {"beta", 0.0}, {"layer_coverage", false}});
  policy->begin(kvec_info(1, 2, 3, 8));
  LayerCache cache = filled_cache(2, 8);
  AttentionStats s;
  torch::Tensor rows = torch::zeros({2, 3, 8});
  rows[0].fill_(0.01f);
  rows[0].select(1, 4).fill_(0.9f);            // head 0: token 4 in every row
  rows[1].fill_(0.1f);                         // head 1: flat in the last row
  rows[1][0][1] = 5.0f;                        // ... but two rows back token 1 dominates
  rows[1][1][1] = 5.0f;
  s.window_rows = rows;
  policy->observe(0, cache, s, Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_TRUE(kept_positions(cache, 0).count(4));
  EXPECT_TRUE(kept_positions(cache, 1).count(1));
}

// Eq. 10: σ over all T tokens (default, P ∈ R^{H×T}) or over the tokens outside the window only.
// Head 0 is flat outside the window but puts 0.95 on the window token: over all tokens it is the
// more focused head, over the prefix the less focused one. δ = 1 rescores the other head with O'.
TEST(Kvec, StdOverAllTokensOrPrefixPicksDifferentHeads) {
  torch::Tensor rows = torch::zeros({2, 3, 6});
  rows[0][2] = torch::tensor({0.01f, 0.01f, 0.01f, 0.01f, 0.01f, 0.95f});  // last row (O = 1)
  rows[0][0][1] = 5.0f, rows[0][1][1] = 5.0f;                             // wider window: token 1
  rows[1][2] = torch::tensor({0.3f, 0.0f, 0.1f, 0.0f, 0.0f, 0.6f});
  rows[1][0][3] = 5.0f, rows[1][1][3] = 5.0f;                             // wider window: token 3
  auto run = [&](const std::string& over) {
    auto policy = make_policy("kvec", {{"window", 1}, {"wide_window", 3}, {"delta", 1}, {"pooling", "none"},
                                       {"beta", 0.0}, {"layer_coverage", false}, {"std_over", over}});
    policy->begin(kvec_info(1, 2, 2, 6));
    LayerCache cache = filled_cache(2, 6);
    AttentionStats s;
    s.window_rows = rows;
    policy->observe(0, cache, s, Phase::kPrefill);
    policy->compress(0, cache, Phase::kPrefill);
    return std::make_pair(kept_positions(cache, 0), kept_positions(cache, 1));
  };
  auto [all0, all1] = run("all");  // head 1 has the lower σ: rescored, keeps token 3
  EXPECT_EQ(all0, (std::set<int64_t>{0, 5}));
  EXPECT_EQ(all1, (std::set<int64_t>{3, 5}));
  auto [pre0, pre1] = run("prefix");  // head 0 (flat prefix) is rescored: keeps token 1
  EXPECT_EQ(pre0, (std::set<int64_t>{1, 5}));
  EXPECT_EQ(pre1, (std::set<int64_t>{0, 5}));
  EXPECT_THROW(make_policy("kvec", {{"std_over", "window"}}), std::invalid_argument);
}

// Records the original positions every layer and head keeps after each compression.
class KeptRecorder : public ForwardingPolicy {
 public:
  explicit KeptRecorder(std::unique_ptr<Policy> inner) : ForwardingPolicy(std::move(inner)) {}
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    ForwardingPolicy::compress(layer, cache, phase);
    torch::Tensor pos = cache.positions().to(torch::kCPU).reshape({-1});
    for (int64_t i = 0; i < pos.size(0); ++i) kept.insert(pos[i].item<int64_t>());
  }
  std::set<int64_t> kept;
};

// Coverage (k-vec.txt §3, Tables 6–7): the share of prompt tokens kept by at least one head of at
// least one layer. On the real model, K-VEC's union over layers must exceed SnapKV's selection
// (K-VEC with both coverage modules off: window O = 16, max pooling 7, top-(B − O) per KV head).
TEST(Kvec, UnionCoverageOverLayersAgainstSnapKVOnTheRealModel) {
  models::LoadedModel loaded = models::load_model("stories260K");
  models::Transformer model(loaded.config, loaded.weights);
  models::Tokenizer tokenizer(loaded.tokenizer_path);
  const std::string text =
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her "
      "red ball. One day, she saw a big dog near the tree. The dog was sad because it had lost its bone. "
      "Lily wanted to help the dog, so she looked under the bench and behind the swings. She found the bone "
      "in the sand and gave it to the dog. The dog wagged its tail and licked her hand. Lily's mom smiled and "
      "said, \"You are very kind, Lily.\" They walked home together, and the dog followed them all the way. "
      "From that day on, Lily and the dog were best friends and played in the park every morning.";
  std::vector<int> ids = tokenizer.encode(text, /*add_bos=*/true);
  std::vector<int64_t> prompt(ids.begin(), ids.end());
  ASSERT_GT(prompt.size(), 120u);
  auto coverage_at = [&](const nlohmann::json& params, int64_t budget) {
    KeptRecorder recorder(make_policy("kvec", params));
    models::SessionOptions options;
    options.protocol = models::Protocol::kOneShot;
    options.budget = Budget::tokens(budget);
    models::InferenceSession session(model, &recorder, options);
    session.prefill(prompt);
    return static_cast<double>(recorder.kept.size()) / static_cast<double>(prompt.size());
  };
  // KVEC_SWEEP='[[budget, {params}], ...]' prints more points (exploration, not a check).
  if (const char* sweep = std::getenv("KVEC_SWEEP"))
    for (const auto& point : nlohmann::json::parse(sweep))
      std::cout << "budget " << point[0] << " " << point[1].dump() << " coverage "
                << coverage_at(point[1], point[0].get<int64_t>()) << "\n";
  auto coverage = [&](const nlohmann::json& params) {
    KeptRecorder recorder(make_policy("kvec", params));
    models::SessionOptions options;
    options.protocol = models::Protocol::kOneShot;
    options.budget = Budget::tokens(32);
    models::InferenceSession session(model, &recorder, options);
    session.prefill(prompt);
    return static_cast<double>(recorder.kept.size()) / static_cast<double>(prompt.size());
  };
  const double kvec = coverage(nlohmann::json::object());
  const double snapkv = coverage({{"head_coverage", false}, {"layer_coverage", false}});
  const double head_only = coverage({{"layer_coverage", false}});
  RecordProperty("kvec_coverage", std::to_string(kvec));
  RecordProperty("snapkv_coverage", std::to_string(snapkv));
  std::cout << "union coverage over layers: K-VEC " << kvec << ", head coverage only " << head_only
            << ", SnapKV selection " << snapkv << " (" << prompt.size() << " prompt tokens, budget 32)\n";
  // Finding (not the paper's claim): on stories260K (5 layers, 4 KV heads) K-VEC's broadcast
  // focus term makes the heads of a layer agree, and its union coverage is *lower* than SnapKV's
  // at every budget >= 24 we measured. Pinned so any change to either selection is noticed:
  // 69 and 81 unique tokens of 238.
  // Defaults (gqa repeat, σ over all tokens): 84 vs 101 (gqa reduce, σ over the prefix: 69 vs 81).
  EXPECT_NEAR(kvec * prompt.size(), 84.0, 1e-6);
  EXPECT_NEAR(snapkv * prompt.size(), 101.0, 1e-6);
}

}  // namespace
}  // namespace kvbench::policies

namespace kvbench::policies {
namespace {

// Under the decode protocol a budget within the observation window keeps the prompt's newest
// tokens at prefill; the decode steps that follow evict from a cache whose slots have moved, so
// the GQA repeat must have happened at the first eviction (it threw "gqa repeat: the cache's
// slots are no longer in arrival order" before 2026-11-27).
TEST(Kvec, DecodesUnderABudgetWithinTheWindow) {
  models::LoadedModel loaded = models::load_model("stories260K");
  models::Transformer model(loaded.config, loaded.weights);
  std::vector<int64_t> prompt{1};
  for (int i = 1; i < 24; ++i) prompt.push_back(3 + (i * 37) % 500);
  for (const char* gqa : {"repeat", "reduce"}) {
    auto policy = make_policy("kvec", {{"gqa", gqa}});
    models::SessionOptions options;
    options.protocol = models::Protocol::kDecode;
    options.budget = Budget::tokens(12);  // < window 16
    models::InferenceSession session(model, policy.get(), options);
    session.prefill(prompt);
    for (int s = 0; s < 6; ++s) ASSERT_NO_THROW(session.step(3 + s)) << gqa << " step " << s;
    EXPECT_EQ(session.cache().max_head_length(), 12) << gqa;
  }
}

}  // namespace
}  // namespace kvbench::policies
