// RoCo and its unified view on constructed attention streams: the top-r std slots are never
// evicted, the lowest *mean* (not sum) attention goes, the grid's other points (H2O's window,
// EasyKV's scope, block-wise eviction) behave as the paper describes.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "policies/importance_scores.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

SequenceInfo roco_info(int64_t heads, int64_t budget, uint64_t seed = 0) {
  SequenceInfo info;
  info.n_layers = 1; info.n_heads = heads; info.n_kv_heads = heads; info.head_dim = 2; info.budget = budget;
  info.seed = seed;
  return info;
}

void append_positions(LayerCache& cache, int64_t from, int64_t count) {
  torch::Tensor k = torch::randn({cache.kv_heads(), count, 2});
  cache.append(k, k.clone(), torch::arange(from, from + count, torch::kInt64));
}

// One decoded query whose attention row is `row` [heads, n] (MHA: KV head = query head).
AttentionStats decode_stats(const torch::Tensor& row) {
  AttentionStats s;
  s.column_sums = row;
  s.column_sq_sums = row.square();
  s.kv_column_sq_sums = row.square();
  s.kv_column_above_mean = (row > 1.0 / row.size(1)).to(torch::kFloat32);
  s.last_row = row;
  s.column_counts = torch::ones({row.size(1)});
  s.n_queries = 1;
  return s;
}

std::set<int64_t> head_positions(const LayerCache& cache, int64_t head) {
  std::set<int64_t> out;
  for (int64_t j = 0; j < cache.size(); ++j) out.insert(cache.positions()[head][j].item<int64_t>());
  return out;
}

// Writes the ledger directly: Σa, Σa², count per slot (one head).
void set_ledger(LayerCache& cache, const std::vector<float>& acc, const std::vector<float>& sq,
                const std::vector<float>& count) {
  const int64_t n = cache.size();
  for (int64_t j = 0; j < n; ++j) {
    cache.state("acc")[0][j] = acc[j];
    cache.state("acc_sq")[0][j] = sq[j];
    cache.state("count")[0][j] = count[j];
  }
}

TEST(Roco, NeverEvictsATopRStdTokenOnRandomStreams) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t budget = 12 + 4 * trial, heads = 2;
    auto policy = make_policy("roco", {{"scope", "std"}});  // the paper's rule
    policy->begin(roco_info(heads, budget, trial));
    LayerCache cache(heads, 2, torch::kFloat32);
    for (int64_t p = 0; p < 80; ++p) {
      append_positions(cache, p, 1);
      // Peaked rows: a few random slots take most of the mass, so std varies a lot across slots.
      torch::Tensor logits = torch::randn({heads, cache.size()}) * 3.0;
      policy->observe(0, cache, decode_stats(torch::softmax(logits, 1)), Phase::kDecode);
      // The protected set, computed independently of the policy from the ledger.
      torch::Tensor std_dev = attention_std(cache);
      const int64_t r = budget / 2;
      std::vector<std::set<int64_t>> protect(heads);
      for (int64_t h = 0; h < heads; ++h) {
        torch::Tensor top = std::get<1>(std_dev[h].topk(std::min<int64_t>(r, cache.size())));
        for (int64_t i = 0; i < top.size(0); ++i)
          protect[h].insert(cache.positions()[h][top[i].item<int64_t>()].item<int64_t>());
      }
      // Ties in std at the r-th place would make "the top r" ambiguous; random rows avoid them.
      policy->compress(0, cache, Phase::kDecode);
      ASSERT_LE(cache.size(), budget);
      for (int64_t h = 0; h < heads; ++h) {
        std::set<int64_t> now = head_positions(cache, h);
        for (int64_t q : protect[h]) ASSERT_TRUE(now.count(q)) << "evicted top-r std token " << q << " at step " << p;
      }
    }
  }
}

TEST(Roco, EvictsTheLowestMeanInsideTheStdScope) {
  // Budget 4, r = 2, five slots. Slot 0 has the lowest mean but the largest std: protected.
  // Slot 3 the second largest std: protected. Among {1, 2, 4} the lowest mean is slot 2 (sum 0.6
  // over 6 queries = 0.1) although slot 4 has the lowest sum (0.2 over 1 query = 0.2).
  auto policy = make_policy("roco", {{"scope", "std"}});  // the paper's rule
  policy->begin(roco_info(1, 4));
  LayerCache cache(1, 2, torch::kFloat32);
  append_positions(cache, 0, 5);
  // mean = acc/count: 0.033 0.3 0.1 0.5 0.2 ; std = sqrt(Σa²/c − mean²): 0.233 0.187 0.041 0.387 0
  set_ledger(cache, {0.3f, 2.4f, 0.6f, 1.5f, 0.2f}, {0.5f, 1.0f, 0.07f, 1.2f, 0.04f}, {9, 8, 6, 3, 1});
  policy->compress(0, cache, Phase::kDecode);
  EXPECT_EQ(head_positions(cache, 0), (std::set<int64_t>{0, 1, 3, 4}));
  // With AAS (sum) instead of MAS, slot 4 (smallest sum) would go: the grid really changes the choice.
  auto aas = make_policy("roco", {{"importance", "aas"}, {"scope", "std"}});
  aas->begin(roco_info(1, 4));
  LayerCache other(1, 2, torch::kFloat32);
  append_positions(other, 0, 5);
  set_ledger(other, {0.3f, 2.4f, 0.6f, 1.5f, 0.2f}, {0.5f, 1.0f, 0.07f, 1.2f, 0.04f}, {9, 8, 6, 3, 1});
  aas->compress(0, other, Phase::kDecode);
  EXPECT_EQ(head_positions(other, 0), (std::set<int64_t>{0, 1, 2, 3}));
}

TEST(Roco, WindowScopeIsH2OsRecentWindow) {
  // aas × window: the last r = 2 slots are safe even with zero attention; the lowest outside goes.
  auto policy = make_policy("roco", {{"importance", "aas"}, {"scope", "window"}});
  policy->begin(roco_info(1, 4));
  LayerCache cache(1, 2, torch::kFloat32);
  append_positions(cache, 0, 5);
  set_ledger(cache, {0.5f, 0.2f, 0.9f, 0.0f, 0.0f}, {0, 0, 0, 0, 0}, {5, 4, 3, 2, 1});
  policy->compress(0, cache, Phase::kDecode);
  EXPECT_EQ(head_positions(cache, 0), (std::set<int64_t>{0, 2, 3, 4}));
}

TEST(Roco, EasyKVScopeProtectsTheLastTenAndChoosesAmongTheLowestStd) {
  // Budget 20: candidates = 20 − ⌊0.3·20⌋ = 14 slots of lowest std among slots 0..10 (the last 10
  // of 21 are protected) -> all 11 older slots are candidates; the lowest mean among them goes.
  auto policy = make_policy("roco", {{"scope", "easykv"}});
  policy->begin(roco_info(1, 20));
  LayerCache cache(1, 2, torch::kFloat32);
  append_positions(cache, 0, 21);
  std::vector<float> acc(21, 1.0f), sq(21, 0.2f), count(21, 10.0f);
  acc[20] = 0.0f;  // the newest has the lowest mean but is protected
  acc[7] = 0.5f;   // the lowest mean among the candidates
  set_ledger(cache, acc, sq, count);
  policy->compress(0, cache, Phase::kDecode);
  std::set<int64_t> now = head_positions(cache, 0);
  EXPECT_FALSE(now.count(7));
  EXPECT_TRUE(now.count(20));
  EXPECT_EQ(now.size(), 20u);
}

TEST(Roco, BlockWiseEvictionFreesBlockSlotsAtOnce) {
  auto policy = make_policy("roco", {{"evict_block", 4}});
  policy->begin(roco_info(1, 10));
  LayerCache cache(1, 2, torch::kFloat32);
  std::vector<int64_t> sizes;
  for (int64_t p = 0; p < 20; ++p) {
    append_positions(cache, p, 1);
    policy->observe(0, cache, decode_stats(torch::softmax(torch::randn({1, cache.size()}), 1)), Phase::kDecode);
    policy->compress(0, cache, Phase::kDecode);
    sizes.push_back(cache.size());
  }
  // 11 tokens -> evict down to 7, then 8, 9, 10 without eviction, 11 -> 7 again.
  EXPECT_EQ(sizes[10], 7);
  EXPECT_EQ(sizes[11], 8);
  EXPECT_EQ(sizes[13], 10);
  EXPECT_EQ(sizes[14], 7);
}

TEST(Roco, SharedHeadsKeepTheSameTokensEverywhere) {
  auto policy = make_policy("roco", {{"importance", "ltas"}, {"scope", "none"}, {"shared_heads", true}});
  policy->begin(roco_info(2, 6));
  LayerCache cache(2, 2, torch::kFloat32);
  for (int64_t p = 0; p < 12; ++p) {
    append_positions(cache, p, 1);
    policy->observe(0, cache, decode_stats(torch::softmax(torch::randn({2, cache.size()}) * 2, 1)), Phase::kDecode);
    policy->compress(0, cache, Phase::kDecode);
    EXPECT_EQ(head_positions(cache, 0), head_positions(cache, 1));
  }
}

TEST(Roco, RejectsUnknownGridPoints) {
  EXPECT_THROW(make_policy("roco", {{"importance", "entropy"}}), std::invalid_argument);
  EXPECT_THROW(make_policy("roco", {{"scope", "global"}}), std::invalid_argument);
  EXPECT_THROW(make_policy("roco", {{"scope_ratio", 1.5}}), std::invalid_argument);
}

}  // namespace
}  // namespace kvbench::policies

#include "budget_probe.hpp"

namespace kvbench::policies {
namespace {

// Every point of the grid (and the ablations) keeps the budget on the real model.
TEST(Roco, EveryGridPointKeepsTheBudgetOnTheRealModel) {
  uint64_t seed = 1;
  for (const char* importance : {"random", "recency", "aas", "aqas", "ltas", "mas"})
    for (const char* scope : {"none", "window", "std", "easykv"})
      EXPECT_EQ(testing::first_budget_violation("roco", {{"importance", importance}, {"scope", scope}}, seed++), "");
  EXPECT_EQ(testing::first_budget_violation("roco", {{"evict_block", 3}, {"sinks", 4}}, 99), "");
  EXPECT_EQ(testing::first_budget_violation("roco", {{"importance", "ltas"}, {"scope", "none"}, {"shared_heads", true}}, 98), "");
}

}  // namespace
}  // namespace kvbench::policies
