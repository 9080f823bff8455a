// BumbleBee: the submodular mixture, greedy's (1 − 1/e) guarantee against brute force, lazy =
// naive greedy, and the online step of Alg. 2 checked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "policies/registry.hpp"
#include "policies/submodular.hpp"

namespace kvbench::policies {
namespace {

namespace sm = submodular;

double brute_force_best(const sm::Mixture& g, int64_t n, int64_t k) {
  double best = 0;
  std::vector<int64_t> subset;
  std::function<void(int64_t)> rec = [&](int64_t start) {
    if (static_cast<int64_t>(subset.size()) == k) {
      best = std::max(best, g.value(subset));
      return;
    }
    for (int64_t i = start; i < n; ++i) {
      subset.push_back(i);
      rec(i + 1);
      subset.pop_back();
    }
  };
  rec(0);
  return best;
}

TEST(BumbleBee, PowerConcaveInvertsItsGenerator) {
  sm::Concave phi = sm::Concave::parse("power", 0.04, 1.0);
  for (double y : {0.01, 0.3, 0.9, 1.05, 1.2}) {
    const double x = 0.04 * std::pow(y, 25.0) + y;
    EXPECT_NEAR(phi(x), y, 1e-9);
  }
  EXPECT_EQ(phi(0), 0);
  sm::Concave log_phi = sm::Concave::parse("log", 0, 0);
  EXPECT_DOUBLE_EQ(log_phi(1.5), std::log1p(1.5));
}

TEST(BumbleBee, GreedyIsWithinOneMinusOneOverEOfTheOptimum) {
  torch::manual_seed(3);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = 10, k = 1 + trial % 4;
    torch::Tensor keys = torch::randn({n, 6}, torch::kFloat64);
    torch::Tensor acc = torch::rand({n}, torch::kFloat64) * 3;
    for (const char* phi : {"log", "power"}) {
      sm::Mixture g(sm::relu_cosine_similarity(keys), acc, 0.3, sm::Concave::parse(phi, 0.04, 1.0));
      std::vector<int64_t> all(n);
      std::iota(all.begin(), all.end(), 0);
      const double optimum = brute_force_best(g, n, k);
      const std::vector<int64_t> naive = sm::maximize(g, all, k, sm::Greedy::kNaive, 1e-5, 0);
      const std::vector<int64_t> lazy = sm::maximize(g, all, k, sm::Greedy::kLazy, 1e-5, 0);
      EXPECT_EQ(naive, lazy) << "lazy greedy must pick exactly naive greedy's set";
      EXPECT_GE(g.value(naive), (1 - 1 / M_E) * optimum - 1e-12);
      EXPECT_LE(g.value(naive), optimum + 1e-12);
    }
  }
}

TEST(BumbleBee, MixtureIsNormalisedToOne) {
  torch::Tensor keys = torch::randn({7, 4}, torch::kFloat64);
  sm::Mixture g(sm::relu_cosine_similarity(keys), torch::rand({7}, torch::kFloat64), 0.3, sm::Concave{});
  EXPECT_NEAR(g.value({0, 1, 2, 3, 4, 5, 6}), 1.0, 1e-12);
  EXPECT_EQ(g.value({}), 0.0);
}

TEST(BumbleBee, FacilityLocationPrefersDiverseKeysOverDuplicates) {
  // Keys 0 and 1 are the same direction, 2 is orthogonal; equal attention. With λ = 1 the best
  // pair must cover both directions.
  torch::Tensor keys = torch::tensor({1.0, 0.0, 1.0, 0.01, 0.0, 1.0}, torch::kFloat64).reshape({3, 2});
  sm::Mixture g(sm::relu_cosine_similarity(keys), torch::ones({3}, torch::kFloat64), 1.0, sm::Concave{});
  std::vector<int64_t> chosen = sm::maximize(g, {0, 1, 2}, 2, sm::Greedy::kLazy, 1e-5, 0);
  std::sort(chosen.begin(), chosen.end());
  EXPECT_TRUE(chosen == std::vector<int64_t>({0, 2}) || chosen == std::vector<int64_t>({1, 2}));
}

// Alg. 2 by hand: summary budget 2 (local_ratio 0 => no window), one KV head, three slots.
// Keys: k0 = (1,0), k1 = (1,0) (a duplicate of k0), k2 = (0,1). Attention a = (0.5, 0.5, 0.5).
// Conditional gains with λ = 0.3, ϕ = log1p, |S'| = 3, total = 1.5:
//   FL part: k0 → (1 − 1)/3 = 0, k1 → 0, k2 → (1 − 0)/3;  c part equal for all three.
// So k0 and k1 tie at the minimum and the older one (k0) is discarded: kept = {1, 2}.
TEST(BumbleBee, OnlineStepDiscardsTheLeastConditionalGainAsAlg2) {
  auto policy = make_policy("bumblebee", {{"local_ratio", 0.0}, {"mode", "online"}});
  SequenceInfo info;
  info.n_layers = 1; info.n_heads = 1; info.n_kv_heads = 1; info.head_dim = 2; info.budget = 2;
  policy->begin(info);
  LayerCache cache(1, 2, torch::kFloat32);
  torch::Tensor k = torch::tensor({1.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f}).reshape({1, 3, 2});
  cache.append(k, k.clone(), torch::arange(3, torch::kInt64));
  AttentionStats stats;
  stats.column_sums = torch::full({1, 3}, 0.5f);
  policy->observe(0, cache, stats, Phase::kDecode);
  policy->compress(0, cache, Phase::kDecode);
  ASSERT_EQ(cache.size(), 2);
  EXPECT_EQ(cache.positions()[0][0].item<int64_t>(), 1);
  EXPECT_EQ(cache.positions()[0][1].item<int64_t>(), 2);
  // The accumulated attention travelled with its slots.
  EXPECT_FLOAT_EQ(cache.state("acc")[0][0].item<float>(), 0.5f);
}

// With λ = 0 only attention matters: the online step drops the least attended slot.
TEST(BumbleBee, OnlineWithLambdaZeroDropsTheLeastAttended) {
  auto policy = make_policy("bumblebee", {{"local_ratio", 0.0}, {"mode", "online"}, {"lambda", 0.0}});
  SequenceInfo info;
  info.n_layers = 1; info.n_heads = 1; info.n_kv_heads = 1; info.head_dim = 2; info.budget = 3;
  policy->begin(info);
  LayerCache cache(1, 2, torch::kFloat32);
  torch::Tensor k = torch::randn({1, 4, 2});
  cache.append(k, k.clone(), torch::arange(4, torch::kInt64));
  AttentionStats stats;
  stats.column_sums = torch::tensor({0.9f, 0.1f, 0.7f, 0.4f}).reshape({1, 4});
  policy->observe(0, cache, stats, Phase::kDecode);
  policy->compress(0, cache, Phase::kDecode);
  ASSERT_EQ(cache.size(), 3);
  std::vector<int64_t> kept;
  for (int i = 0; i < 3; ++i) kept.push_back(cache.positions()[0][i].item<int64_t>());
  EXPECT_EQ(kept, std::vector<int64_t>({0, 2, 3}));
}

TEST(BumbleBee, OfflinePrefillKeepsWindowAndBudget) {
  auto policy = make_policy("bumblebee");
  SequenceInfo info;
  info.n_layers = 1; info.n_heads = 2; info.n_kv_heads = 2; info.head_dim = 4; info.budget = 8;
  policy->begin(info);
  LayerCache cache(2, 4, torch::kFloat32);
  torch::Tensor k = torch::randn({2, 30, 4});
  cache.append(k, k.clone(), torch::arange(30, torch::kInt64));
  AttentionStats stats;
  stats.column_sums = torch::rand({2, 30});
  policy->observe(0, cache, stats, Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  ASSERT_EQ(cache.size(), 8);
  // local_ratio 0.5: the last 4 slots are the window.
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(cache.positions()[h][4 + j].item<int64_t>(), 26 + j);
}

}  // namespace
}  // namespace kvbench::policies
