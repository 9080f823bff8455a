// The baseline policies on hand-built caches and attention statistics, where the kept set is known
// by hand and a plausible wrong implementation keeps a different one.
#include <gtest/gtest.h>

#include <map>

#include "policies/scorer_registry.hpp"
#include "policies/baselines_helpers.hpp"
#include "policies/gqa_mode.hpp"
#include "policies/keep_scored.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

using baseline_test::append_tokens;
using baseline_test::cache_of;
using baseline_test::info_for;
using baseline_test::kept;
using baseline_test::rows;

AttentionStats column_sums(const std::vector<float>& sums, int64_t heads = 1) {
  AttentionStats s;
  s.column_sums = torch::tensor(sums).unsqueeze(0).expand({heads, (int64_t)sums.size()}).clone();
  s.n_queries = 1;
  return s;
}

TEST(BaselineLocal, KeepsTheLastBudgetTokensOnEveryHead) {
  auto policy = make_policy("local");
  policy->begin(info_for(1, 2, 2, 5, 12));
  LayerCache cache = cache_of(2, 12);
  policy->compress(0, cache, Phase::kPrefill);
  for (int64_t h = 0; h < 2; ++h) EXPECT_EQ(kept(cache, h), (std::set<int64_t>{7, 8, 9, 10, 11}));
  EXPECT_EQ(policy->position_mode(), PositionMode::kOriginal);
  EXPECT_EQ(make_policy("local", {{"positions", "cache_slot"}})->position_mode(), PositionMode::kCacheSlot);
}

TEST(BaselineStreamingLlm, KeepsExactlyTheSinksAndTheLastWindow) {
  auto policy = make_policy("streaming_llm");
  EXPECT_EQ(policy->position_mode(), PositionMode::kCacheSlot);
  policy->begin(info_for(1, 2, 2, 8, 20));
  LayerCache cache = cache_of(2, 20);
  policy->compress(0, cache, Phase::kPrefill);
  for (int64_t h = 0; h < 2; ++h) EXPECT_EQ(kept(cache, h), (std::set<int64_t>{0, 1, 2, 3, 16, 17, 18, 19}));
  // Streaming on: one token per step, the sinks stay and the window slides.
  for (int64_t t = 20; t < 25; ++t) {
    append_tokens(cache, t, 1);
    policy->compress(0, cache, Phase::kDecode);
  }
  EXPECT_EQ(cache.size(), 8);
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{0, 1, 2, 3, 21, 22, 23, 24}));
  // Slot order is arrival order, which cache_slot positions rely on.
  EXPECT_TRUE(torch::equal(cache.positions()[1], torch::tensor({0, 1, 2, 3, 21, 22, 23, 24}, torch::kInt64)));
  // A budget below the sinks keeps the newest token.
  auto tiny = make_policy("streaming_llm", {{"positions", "original"}});
  EXPECT_EQ(tiny->position_mode(), PositionMode::kOriginal);
  tiny->begin(info_for(1, 1, 1, 3, 20));
  LayerCache small = cache_of(1, 20);
  tiny->compress(0, small, Phase::kPrefill);
  EXPECT_EQ(kept(small, 0), (std::set<int64_t>{0, 1, 19}));
}

TEST(BaselineRandom, SeededDeterministicUniformAndKeepsTheRecentWindow) {
  auto run = [](uint64_t seed) {
    auto policy = make_policy("random");
    policy->begin(info_for(1, 2, 2, 10, 20, seed));
    LayerCache cache = cache_of(2, 20);
    policy->compress(0, cache, Phase::kPrefill);
    EXPECT_EQ(kept(cache, 0), kept(cache, 1));  // the same tokens on every head by default
    return kept(cache, 0);
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
  // Recent window (half the budget) always kept; the other half uniform over the 15 older slots.
  std::map<int64_t, int> hits;
  const int seeds = 300;
  for (int s = 0; s < seeds; ++s) {
    std::set<int64_t> k = run(s);
    ASSERT_EQ(k.size(), 10u);
    for (int64_t t = 15; t < 20; ++t) EXPECT_TRUE(k.count(t));
    for (int64_t t : k) ++hits[t];
  }
  for (int64_t t = 0; t < 15; ++t) {  // expected 1/3 of the seeds each
    EXPECT_GT(hits[t], seeds / 5) << "slot " << t;
    EXPECT_LT(hits[t], seeds / 2) << "slot " << t;
  }
  auto per_head = make_policy("random", {{"per_head", true}});
  per_head->begin(info_for(1, 2, 2, 10, 40, 3));
  LayerCache cache = cache_of(2, 40);
  per_head->compress(0, cache, Phase::kPrefill);
  EXPECT_NE(kept(cache, 0), kept(cache, 1));
}

TEST(BaselineH2O, KeepsTheHeaviestAccumulatedColumnsOutsideTheRecentWindow) {
  auto policy = make_policy("h2o");  // budget 6: recent 3, heavy 3
  policy->begin(info_for(1, 1, 1, 6, 10));
  LayerCache cache = cache_of(1, 10);
  // First forward: heavy hitters 1, 4, 5. Second forward: a different, smaller preference for
  // 2, 3, 6. Only the accumulated sums pick {1, 4, 5}; the last forward alone picks {2, 3, 6}.
  // The recent slots 7..9 get nothing and must still be kept.
  policy->observe(0, cache, column_sums({0.1f, 3.0f, 0.1f, 0.1f, 2.0f, 2.5f, 0.1f, 0, 0, 0}), Phase::kPrefill);
  policy->observe(0, cache, column_sums({0.0f, 0.1f, 1.0f, 1.0f, 0.1f, 0.1f, 1.0f, 0, 0, 0}), Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{1, 4, 5, 7, 8, 9}));
  // Scores travel with their tokens: two new tokens, a small observation, one more eviction.
  append_tokens(cache, 10, 2);
  policy->observe(0, cache, column_sums({0, 0, 0, 0.5f, 0.2f, 0.3f, 0.0f, 0.0f}), Phase::kDecode);
  policy->compress(0, cache, Phase::kDecode);
  // Recent {9, 10, 11}; heavy among {1, 4, 5, 7, 8}: 1 (3.0), 5 (2.6), 4 (2.5).
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{1, 4, 5, 9, 10, 11}));
}

TEST(BaselineH2O, OneShotVariantUsesTheFixedWindowAndRefusesToEvictWhileDecoding) {
  auto policy = make_policy("h2o", {{"variant", "oneshot"}, {"window", 2}});
  policy->begin(info_for(1, 1, 1, 6, 10));
  LayerCache cache = cache_of(1, 10);
  policy->observe(0, cache, column_sums({0.1f, 3.0f, 0.2f, 0.3f, 2.0f, 2.5f, 1.5f, 0.4f, 0, 0}), Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{1, 4, 5, 6, 8, 9}));
  append_tokens(cache, 10, 1);
  EXPECT_THROW(policy->compress(0, cache, Phase::kDecode), std::invalid_argument);
  EXPECT_THROW(make_policy("h2o", {{"variant", "sometimes"}}), std::invalid_argument);
}

TEST(BaselineTova, KeepsTheSameTokensOnEveryHeadByTheHeadAveragedLastRow) {
  auto policy = make_policy("tova");
  policy->begin(info_for(1, 2, 2, 4, 8));
  LayerCache cache = cache_of(2, 8);
  AttentionStats s;
  // Per head the choices differ ({0,1,2,3} vs {3,4,5,6}); the head average picks {0,1,3,4}. No
  // recent window: the newest token (7) goes.
  s.last_row = rows({{0.40f, 0.30f, 0.10f, 0.05f, 0.05f, 0.05f, 0.03f, 0.02f},
                     {0.02f, 0.03f, 0.05f, 0.30f, 0.35f, 0.10f, 0.10f, 0.05f}});
  s.n_queries = 1;
  policy->observe(0, cache, s, Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(kept(cache, 1), (std::set<int64_t>{0, 1, 3, 4}));
}

TEST(BaselineTova, GqaAveragesOverAllQueryHeads) {
  auto policy = make_policy("tova");
  policy->begin(info_for(1, 4, 2, 2, 4));
  LayerCache cache = cache_of(2, 4);
  AttentionStats s;
  s.last_row = rows({{0.7f, 0.1f, 0.1f, 0.1f}, {0.1f, 0.1f, 0.7f, 0.1f}, {0.1f, 0.6f, 0.2f, 0.1f}, {0.1f, 0.1f, 0.1f, 0.7f}});
  s.n_queries = 1;
  policy->observe(0, cache, s, Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  // Mean over the 4 query heads: {0.25, 0.225, 0.275, 0.25} -> slots 2 and 0 (tie 0/3: earlier).
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{0, 2}));
  EXPECT_EQ(kept(cache, 1), (std::set<int64_t>{0, 2}));
}

AttentionStats window_rows(const std::vector<std::vector<float>>& per_head_row, int64_t queries) {
  AttentionStats s;
  s.window_rows = rows(per_head_row).unsqueeze(1).expand({(int64_t)per_head_row.size(), queries, -1}).clone();
  s.n_queries = queries;
  return s;
}

TEST(BaselineSnapKV, PoolingChangesTheChoice) {
  // 20 tokens, window 2 (slots 18, 19), budget 4: two tokens chosen among 0..17. A lone spike at
  // 3 (0.5) and a wide cluster at 9..13 (0.45 at its edges). Without pooling: {3, 10}. Max-pooling
  // (kernel 3) spreads the spike to its neighbours: {2, 3}. Avg-pooling favours the cluster.
  std::vector<float> row(20, 0.0f);
  row[3] = 0.5f;
  row[10] = 0.45f, row[11] = 0.2f, row[12] = 0.45f;
  row[17] = 0.01f;
  row[18] = 0.9f;  // a window token: must not leak into slot 17 through pooling
  auto run = [&](const std::string& pooling) {
    auto policy = make_policy("snapkv", {{"window", 2}, {"kernel", 3}, {"pooling", pooling}});
    policy->begin(info_for(1, 1, 1, 4, 20));
    LayerCache cache = cache_of(1, 20);
    policy->observe(0, cache, window_rows({row}, 2), Phase::kPrefill);
    policy->compress(0, cache, Phase::kPrefill);
    return kept(cache, 0);
  };
  EXPECT_EQ(run("none"), (std::set<int64_t>{3, 10, 18, 19}));
  EXPECT_EQ(run("max"), (std::set<int64_t>{2, 3, 18, 19}));
  // avg (zero padding counted): 10.. -> (0.45+0.2+0.45)/3 = 0.367 at 11; 0.217 at 10 and 12; the
  // spike spreads to 0.167 over 2..4.
  EXPECT_EQ(run("avg"), (std::set<int64_t>{10, 11, 18, 19}));
}

TEST(BaselineSnapKV, GqaReduceReducesQueryHeadsToTheirKvHeadPerHeadChoice) {
  auto policy = make_policy("snapkv", {{"window", 1}, {"pooling", "none"}, {"gqa", "reduce"}});
  policy->begin(info_for(1, 4, 2, 2, 6));
  LayerCache cache = cache_of(2, 6);
  // KV head 0 <- query heads 0, 1; KV head 1 <- query heads 2, 3.
  policy->observe(0, cache,
                  window_rows({{0.5f, 0.0f, 0.2f, 0.1f, 0.0f, 0.2f},
                               {0.0f, 0.0f, 0.5f, 0.3f, 0.0f, 0.2f},
                               {0.0f, 0.1f, 0.0f, 0.0f, 0.7f, 0.2f},
                               {0.0f, 0.6f, 0.0f, 0.0f, 0.2f, 0.2f}},
                              3),
                  Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{2, 5}));  // mean: 0.25, 0, 0.35, 0.2
  EXPECT_EQ(kept(cache, 1), (std::set<int64_t>{4, 5}));  // mean: 0, 0.35, 0, 0, 0.45
}

// GQA repeat (the default, the official SnapKV): K/V are repeated to the query heads, every query
// head keeps its own tokens, the layer then stores (and counts the bytes of) 4 heads, and later
// tokens are appended to every copy.
TEST(BaselineSnapKV, GqaRepeatKeepsTokensPerQueryHeadAndStoresEveryHead) {
  auto policy = make_policy("snapkv", {{"window", 1}, {"pooling", "none"}});
  policy->begin(info_for(1, 4, 2, 2, 6));
  LayerCache cache = cache_of(2, 6);
  const int64_t bytes_per_head_slot = 2 * 2 * 4;
  policy->observe(0, cache,
                  window_rows({{0.5f, 0.0f, 0.2f, 0.1f, 0.0f, 0.2f},
                               {0.0f, 0.0f, 0.5f, 0.3f, 0.0f, 0.2f},
                               {0.0f, 0.1f, 0.0f, 0.0f, 0.7f, 0.2f},
                               {0.0f, 0.6f, 0.0f, 0.0f, 0.2f, 0.2f}},
                              3),
                  Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  ASSERT_EQ(cache.kv_heads(), 4);
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{0, 5}));  // query head 0's own top token
  EXPECT_EQ(kept(cache, 1), (std::set<int64_t>{2, 5}));
  EXPECT_EQ(kept(cache, 2), (std::set<int64_t>{4, 5}));
  EXPECT_EQ(kept(cache, 3), (std::set<int64_t>{1, 5}));
  EXPECT_EQ(cache.logical_bytes(), 4 * 2 * bytes_per_head_slot);  // ×2 the reduce mode's 2 heads
  // The copies hold their KV head's keys: query heads 0, 1 <- KV head 0 (token t has key (t, -t)).
  EXPECT_FLOAT_EQ(cache.keys()[1][0][0].item<float>(), 2.0f);
  // Decode: the model's 2 KV heads are appended to all 4 stored heads (as the runtime appends).
  torch::Tensor k = torch::tensor({6.0f, -6.0f, 60.0f, -60.0f}).reshape({2, 1, 2});
  append_model_heads(cache, k, k.clone(), torch::tensor({6L}));
  EXPECT_EQ(cache.size(), 3);
  for (int64_t h = 0; h < 4; ++h) EXPECT_TRUE(kept(cache, h).count(6));
  EXPECT_FLOAT_EQ(cache.keys()[1][2][0].item<float>(), 6.0f);   // query head 1 <- KV head 0
  EXPECT_FLOAT_EQ(cache.keys()[2][2][0].item<float>(), 60.0f);  // query head 2 <- KV head 1
  EXPECT_THROW(append_model_heads(cache, torch::zeros({3, 1, 2}), torch::zeros({3, 1, 2}), torch::tensor({7L})),
               std::invalid_argument);
  // MHA is untouched by the mode.
  auto mha = make_policy("snapkv", {{"window", 1}, {"pooling", "none"}});
  mha->begin(info_for(1, 2, 2, 2, 6));
  LayerCache two = cache_of(2, 6);
  mha->observe(0, two, window_rows({{0.5f, 0, 0, 0, 0, 0.2f}, {0, 0.5f, 0, 0, 0, 0.2f}}, 3), Phase::kPrefill);
  mha->compress(0, two, Phase::kPrefill);
  EXPECT_EQ(two.kv_heads(), 2);
  EXPECT_THROW(make_policy("snapkv", {{"gqa", "mean"}}), std::invalid_argument);
}

TEST(BaselinePyramidKV, LayerBudgetsDecreaseAndSumToLTimesC) {
  auto policy = make_policy("pyramidkv", {{"window", 32}, {"reference_rounding", false}});
  policy->begin(info_for(5, 8, 4, 100, 1000));
  // base = 100 − 32 = 68; min = 68/20 = 3; max = 133; exact steps of 32.5 -> 133, 100.5, 68, 35.5, 3.
  std::vector<int64_t> budgets;
  int64_t sum = 0;
  for (int64_t l = 0; l < 5; ++l) budgets.push_back(policy->layer_budget(l)), sum += budgets.back();
  EXPECT_EQ(sum, 5 * 100);
  for (int64_t l = 1; l < 5; ++l) EXPECT_LT(budgets[l], budgets[l - 1]);
  EXPECT_EQ(budgets.front(), 133 + 32);
  EXPECT_EQ(budgets.back(), 3 + 32);
  EXPECT_EQ(budgets, (std::vector<int64_t>{165, 133, 100, 67, 35}));
  // The reference's integer steps (the default): (133 − 3) // 4 = 32 -> 133, 101, 69, 37, 5 (+32): sum 505.
  auto reference = make_policy("pyramidkv", {{"window", 32}});
  reference->begin(info_for(5, 8, 4, 100, 1000));
  std::vector<int64_t> ref;
  for (int64_t l = 0; l < 5; ++l) ref.push_back(reference->layer_budget(l));
  EXPECT_EQ(ref, (std::vector<int64_t>{165, 133, 101, 69, 37}));
  // A short prompt clamps the bottom layer to the prompt: max = 150 − 32 = 118, min = 18.
  policy->begin(info_for(5, 8, 4, 100, 150));
  EXPECT_EQ(policy->layer_budget(0), 150);
  sum = 0;
  for (int64_t l = 0; l < 5; ++l) sum += policy->layer_budget(l);
  EXPECT_EQ(sum, 500);
  // Shorter than 2(C − w): uniform, as the reference.
  policy->begin(info_for(5, 8, 4, 100, 120));
  for (int64_t l = 0; l < 5; ++l) EXPECT_EQ(policy->layer_budget(l), 100);
}

TEST(BaselinePyramidKV, EachLayerIsCompressedToItsOwnBudget) {
  auto policy = make_policy("pyramidkv", {{"window", 2}, {"pooling", "none"}});
  policy->begin(info_for(3, 1, 1, 6, 40));  // base 4: min 0, max 8 -> 8, 4, 0 (+2)
  std::vector<float> row(40, 0.0f);
  for (int64_t j = 0; j < 38; ++j) row[j] = static_cast<float>(j % 7) / 10.0f;
  for (int64_t l = 0; l < 3; ++l) {
    LayerCache cache = cache_of(1, 40);
    policy->observe(l, cache, window_rows({row}, 2), Phase::kPrefill);
    policy->compress(l, cache, Phase::kPrefill);
    EXPECT_EQ(cache.size(), policy->layer_budget(l));
    EXPECT_TRUE(kept(cache, 0).count(38) && kept(cache, 0).count(39));
  }
  EXPECT_EQ(policy->layer_budget(0), 10);
  EXPECT_EQ(policy->layer_budget(2), 2);
}

TEST(BaselineAdaKV, DispersedHeadGetsMoreSlotsThanAConcentratedOneAndTheTotalHolds) {
  // Two KV heads, window 2, B = 6: b = 4, H·b = 8 slots outside the windows. Head 0 concentrates
  // on one token; head 1 spreads over ten. Top-8 over both: 1 from head 0, 7 from head 1;
  // safeguard α = 0.2: 0.8 + 0.8·1 = 1.6 and 0.8 + 0.8·7 = 6.4 -> apportioned 2 and 6
  // (reference_rounding false; the reference's round(0.8·c + ⌊0.8⌋) gives 1 and 6, below).
  std::vector<float> peaked(12, 0.005f), flat(12, 0.1f);
  peaked[4] = 0.9f;
  auto policy = make_policy("adakv", {{"window", 2}, {"pooling", "none"}, {"reference_rounding", false}});
  policy->begin(info_for(1, 2, 2, 6, 12));
  LayerCache cache = cache_of(2, 12);
  policy->observe(0, cache, window_rows({peaked, flat}, 2), Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  const auto concentrated = kept(cache, 0), dispersed = kept(cache, 1);
  EXPECT_EQ(concentrated.size(), 4u);
  EXPECT_EQ(dispersed.size(), 8u);
  EXPECT_EQ(concentrated.size() + dispersed.size(), 2u * 6u);
  EXPECT_TRUE(concentrated.count(4));
  EXPECT_TRUE(concentrated.count(10) && concentrated.count(11) && dispersed.count(10) && dispersed.count(11));
  EXPECT_FALSE(cache.all_valid());
  EXPECT_LE(static_cast<int64_t>(dispersed.size()), policy->layer_budget(0));
  // α = 1: every head gets exactly b (SnapKV's uniform allocation).
  auto uniform = make_policy("adakv", {{"window", 2}, {"pooling", "none"}, {"floor_alpha", 1.0}});
  uniform->begin(info_for(1, 2, 2, 6, 12));
  LayerCache same = cache_of(2, 12);
  uniform->observe(0, same, window_rows({peaked, flat}, 2), Phase::kPrefill);
  uniform->compress(0, same, Phase::kPrefill);
  EXPECT_EQ(kept(same, 0).size(), 6u);
  EXPECT_EQ(kept(same, 1).size(), 6u);
  // The default (the reference's rounding): 1 + 2 and 6 + 2 slots, 11 in all.
  auto reference = make_policy("adakv", {{"window", 2}, {"pooling", "none"}});
  reference->begin(info_for(1, 2, 2, 6, 12));
  LayerCache ref = cache_of(2, 12);
  reference->observe(0, ref, window_rows({peaked, flat}, 2), Phase::kPrefill);
  reference->compress(0, ref, Phase::kPrefill);
  EXPECT_EQ(kept(ref, 0), (std::set<int64_t>{4, 10, 11}));
  EXPECT_EQ(kept(ref, 1).size(), 8u);
}

TEST(BaselineAdaKV, RaggedCachesStayWithinTheLayerTotalWhileDecoding) {
  std::vector<float> peaked(12, 0.005f), flat(12, 0.1f);
  peaked[4] = 0.9f;
  auto policy = make_policy("adakv", {{"window", 2}, {"pooling", "none"}, {"reference_rounding", false}});
  policy->begin(info_for(1, 2, 2, 6, 12));
  LayerCache cache = cache_of(2, 12);
  policy->observe(0, cache, window_rows({peaked, flat}, 2), Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  for (int64_t t = 12; t < 20; ++t) {
    append_tokens(cache, t, 1);
    const int64_t n = cache.size();
    std::vector<float> a(n, 0.01f), b(n, 1.0f / n);
    a[0] = 0.5f;
    policy->observe(0, cache, window_rows({a, b}, 1), Phase::kDecode);
    policy->compress(0, cache, Phase::kDecode);
    EXPECT_EQ(kept(cache, 0).size() + kept(cache, 1).size(), 12u);
    for (int64_t h = 0; h < 2; ++h) {
      EXPECT_TRUE(kept(cache, h).count(t)) << "newest token in the window of head " << h;
      EXPECT_TRUE(kept(cache, h).count(t - 1));
    }
  }
}

TEST(BaselineAdaKV, WrapsOtherScorers) {
  for (const char* scorer : {"h2o", "tova", "scissorhands"}) {
    auto policy = make_policy("adakv", {{"scorer", scorer}});
    EXPECT_EQ(policy->wants().column_sums, std::string(scorer) == "h2o");
    EXPECT_EQ(policy->wants().last_row, std::string(scorer) == "tova");
  }
  EXPECT_THROW(make_policy("adakv", {{"scorer", "oracle"}}), std::invalid_argument);
}

TEST(BaselineScissorHands, CountsAboveAverageAttentionWithinTheHistoryWindow) {
  // 6 tokens; the forward's last 3 queries are slots 3, 4, 5 (they attend 4, 5, 6 tokens:
  // thresholds 1/4, 1/5, 1/6). History window 2: only queries 4 and 5 count.
  //   query 3 (outside the history): favours 1.
  //   query 4: above 0.2 -> {3}; a 1/n with n = 6 threshold would also count 4 (0.19).
  //   query 5: above 1/6 -> {0, 1, 3, 4}.
  // Counts: 0:1, 1:1, 3:2, 4:1. Budget 3, recent 1 (slot 5): keep 3 and then 0 (ties: earlier).
  // Counting every query gives slot 1 two votes ({1, 3}); a fixed 1/6 threshold gives 4 two ({3, 4}).
  AttentionStats s;
  s.window_rows = torch::stack({torch::tensor({0.10f, 0.70f, 0.10f, 0.10f, 0.0f, 0.0f}),
                                torch::tensor({0.15f, 0.05f, 0.10f, 0.51f, 0.19f, 0.0f}),
                                torch::tensor({0.30f, 0.17f, 0.05f, 0.30f, 0.17f, 0.01f})})
                      .unsqueeze(0);
  s.n_queries = 3;
  auto policy = make_policy("scissorhands", {{"history_window", 2}, {"recent", 1}});
  policy->begin(info_for(1, 1, 1, 3, 6));
  LayerCache cache = cache_of(1, 6);
  policy->observe(0, cache, s, Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{0, 3, 5}));
}

TEST(BaselineScissorHands, CountsExpireAfterTheHistoryWindowAndTravelWithTheirSlot) {
  auto scorer = make_scorer("scissorhands", resolved_params("scissorhands", {{"history_window", 2}, {"recent", 0}}));
  scorer->begin(info_for(1, 1, 1, 100, 3));
  LayerCache cache = cache_of(1, 3);
  auto step = [&](std::vector<float> row) {
    AttentionStats s;
    s.window_rows = torch::tensor(row).reshape({1, 1, -1});
    s.n_queries = 1;
    scorer->observe(0, cache, s, Phase::kDecode);
  };
  auto counts = [&] {
    torch::Tensor c = scorer->scores(0, cache, newest_valid(cache, 0))[0];
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  };
  step({0.8f, 0.1f, 0.1f});  // slot 0 above 1/3
  append_tokens(cache, 3, 1);
  step({0.6f, 0.3f, 0.05f, 0.05f});  // slots 0, 1 above 1/4
  EXPECT_EQ(counts(), (std::vector<float>{2, 1, 0, 0}));
  append_tokens(cache, 4, 1);
  step({0.1f, 0.1f, 0.7f, 0.05f, 0.05f});  // slot 2; the first step leaves the window
  EXPECT_EQ(counts(), (std::vector<float>{1, 1, 1, 0, 0}));
  cache.keep(torch::tensor({{1, 2, 4}}, torch::kInt64));
  EXPECT_EQ(counts(), (std::vector<float>{1, 1, 0}));
}

TEST(BaselineScissorHands, DropRatioEvictsDownToBMinusM) {
  auto policy = make_policy("scissorhands", {{"drop_ratio", 0.5}, {"recent", 2}});
  policy->begin(info_for(1, 1, 1, 8, 10));
  LayerCache cache = cache_of(1, 10);
  AttentionStats s;
  s.window_rows = torch::full({1, 1, 10}, 0.1f);
  s.n_queries = 1;
  policy->observe(0, cache, s, Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_EQ(cache.size(), 4);
  EXPECT_EQ(policy->layer_budget(0), 8);
}

TEST(BaselineRegistry, EveryBaselineIsRegisteredWithItsReference) {
  for (const char* name : {"local", "random", "streaming_llm", "h2o", "scissorhands", "tova", "snapkv", "pyramidkv", "adakv"}) {
    const PolicyInfo& info = policy_info(name);
    EXPECT_FALSE(info.source.empty()) << name;
    EXPECT_NO_THROW(make_policy(name)) << name;
  }
  auto defaults = [](const std::string& name) { return resolved_params(name, nlohmann::json::object()); };
  EXPECT_EQ(defaults("snapkv")["window"], 32);
  EXPECT_EQ(defaults("snapkv")["kernel"], 7);
  EXPECT_EQ(defaults("snapkv")["pooling"], "max");
  EXPECT_EQ(defaults("pyramidkv")["beta"], 20);
  EXPECT_EQ(defaults("pyramidkv")["window"], 8);  // PyramidKV's own default for its SnapKV scorer
  EXPECT_EQ(defaults("adakv")["floor_alpha"], 0.2);
  EXPECT_EQ(defaults("adakv")["window"], 32);  // the default scorer's (snapkv) parameters join Ada-KV's
  EXPECT_FALSE(defaults("adakv").contains("recent_ratio"));
  EXPECT_EQ(defaults("streaming_llm")["sinks"], 4);
  EXPECT_THROW(make_policy("snapkv", {{"kernel", 4}}), std::invalid_argument);
  EXPECT_THROW(make_policy("snapkv", {{"pooling", "median"}}), std::invalid_argument);
  EXPECT_THROW(make_policy("streaming_llm", {{"positions", "rotated"}}), std::invalid_argument);
}

}  // namespace
}  // namespace kvbench::policies
