// BumbleBee: the submodular mixture, greedy's (1 − 1/e) guarantee against brute force, lazy =
// naive greedy, and the online step of Alg. 2 checked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include "policies/online_summary_ops.hpp"
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

// Alg. 2 recomputed from scratch at every step (every similarity, every member's nearest
// neighbour), on an arrival-ordered cache: what the incremental summary must reproduce.
void discard_from_scratch(LayerCache& cache, double lambda, const sm::Concave& phi, int64_t window, int64_t k) {
  const int64_t n = cache.size(), older = n - window;
  torch::Tensor keys = cache.keys().to(torch::kFloat64), acc = cache.state("acc").to(torch::kFloat64);
  std::vector<torch::Tensor> rows;
  for (int64_t h = 0; h < cache.kv_heads(); ++h) {
    torch::Tensor sim = sm::relu_cosine_similarity(keys[h]);
    torch::Tensor weights = acc[h].contiguous();
    auto s = sim.accessor<double, 2>();
    auto a = weights.accessor<double, 1>();
    std::vector<int64_t> summary(older);
    std::iota(summary.begin(), summary.end(), 0);
    while (static_cast<int64_t>(summary.size()) > k) {
      double total = 0;
      for (int64_t i : summary) total += std::max(0.0, a[i]);
      size_t worst = 0;
      double worst_gain = std::numeric_limits<double>::infinity();
      for (size_t p = 0; p < summary.size(); ++p) {
        const int64_t i = summary[p];
        double nearest = 0;
        for (int64_t j : summary)
          if (j != i) nearest = std::max(nearest, s[i][j]);
        const double gain = lambda * (s[i][i] - nearest) / static_cast<double>(summary.size()) +
                            (1 - lambda) * (phi(total) - phi(total - std::max(0.0, a[i]))) / std::max(phi(total), 1e-300);
        if (gain < worst_gain) worst_gain = gain, worst = p;
      }
      summary.erase(summary.begin() + static_cast<std::ptrdiff_t>(worst));
    }
    for (int64_t j = older; j < n; ++j) summary.push_back(j);
    rows.push_back(torch::tensor(summary, torch::kInt64));
  }
  cache.keep(torch::stack(rows));
}

std::set<int64_t> kept_by(const LayerCache& cache, int64_t h) {
  std::set<int64_t> out;
  for (int64_t j = 0; j < cache.size(); ++j) out.insert(cache.positions()[h][j].item<int64_t>());
  return out;
}

// The incremental online summary (similarities by token id, remembered nearest members, a kAny
// cache whose slots move) discards exactly what recomputing Alg. 2 from scratch discards, step
// after step, with appends of 1–3 tokens. Keys are ±1 on one or four of eight coordinates, so
// every similarity is exact in any summation order and ties (duplicate keys, equal attention) are
// everywhere: the tie rule (discard the older) is exercised, not avoided.
// Keys of ±1 in one or four coordinates (cosines 0, ±1/4, ±1/2, 1: exact) and attention in eighths
// (exact sums): many exact ties. `online_step` runs Alg. 2's step on `any` (a kAny cache); after
// every step it holds the tokens that recomputing every gain from scratch keeps.
void expect_online_steps_equal_recomputation(double lambda, const std::function<void(LayerCache&, int64_t, int64_t)>& online_step) {
  const int64_t kv_heads = 2, dim = 8, budget = 10;
  const double local_ratio = 0.3;
  const int64_t window = static_cast<int64_t>(std::floor(local_ratio * budget)), k = budget - window;
  LayerCache reference(kv_heads, dim, torch::kFloat32), any(kv_heads, dim, torch::kFloat32);
  any.set_slot_order(SlotOrder::kAny);
  std::mt19937 rng(17);
  auto random_key = [&] {
    std::vector<float> key(dim, 0.0f);
    const int nonzero = rng() % 2 ? 1 : 4;
    for (int c = 0; c < nonzero; ++c) key[(rng() % 2 + 2 * c) % dim] = rng() % 3 ? 1.0f : -1.0f;
    return key;
  };
  int64_t next = 0;
  for (int step = 0; step < 60; ++step) {
    const int64_t t = step == 0 ? budget + 2 : 1 + static_cast<int64_t>(rng() % 3);
    std::vector<float> k_data;
    for (int64_t h = 0; h < kv_heads; ++h)
      for (int64_t j = 0; j < t; ++j) {
        std::vector<float> key = random_key();
        k_data.insert(k_data.end(), key.begin(), key.end());
      }
    torch::Tensor keys = torch::tensor(k_data).reshape({kv_heads, t, dim});
    torch::Tensor pos = torch::arange(next, next + t, torch::kInt64);
    reference.append(keys, keys, pos);
    any.append(keys, keys, pos);
    next += t;
    // Attention in eighths by position: exact sums, many equal weights.
    torch::Tensor by_position = torch::randint(0, 4, {kv_heads, next}, torch::kInt64).to(torch::kFloat32) / 8;
    for (LayerCache* cache : {&reference, &any}) {
      torch::Tensor acc = cache->state("acc");
      acc += by_position.gather(1, cache->positions());
    }
    if (reference.size() > budget) discard_from_scratch(reference, lambda, sm::Concave{}, window, k);
    if (any.size() > budget) online_step(any, window, k);
    ASSERT_EQ(reference.size(), any.size()) << "step " << step;
    for (int64_t h = 0; h < kv_heads; ++h) ASSERT_EQ(kept_by(reference, h), kept_by(any, h)) << "lambda " << lambda << " step " << step << " head " << h;
  }
  EXPECT_FALSE(any.in_arrival_order());
}

// The policy on the CPU: the incremental summary (online_summary.hpp).
TEST(BumbleBee, OnlineStepsEqualRecomputingEveryGainFromScratch) {
  for (const double lambda : {0.3, 1.0}) {
    auto policy = make_policy("bumblebee", {{"local_ratio", 0.3}, {"mode", "online"}, {"lambda", lambda}});
    ASSERT_TRUE(policy->slot_order_free());
    SequenceInfo info;
    info.n_layers = 1; info.n_heads = 2; info.n_kv_heads = 2; info.head_dim = 8; info.budget = 10;
    policy->begin(info);
    expect_online_steps_equal_recomputation(lambda, [&](LayerCache& cache, int64_t, int64_t) {
      AttentionStats none;
      none.column_sums = torch::zeros({2, cache.size()});
      policy->observe(0, cache, none, Phase::kDecode);
      policy->compress(0, cache, Phase::kDecode);
    });
  }
}

// The summary a GPU runs (tensor ops, nothing read back), here on the CPU.
TEST(BumbleBee, TheTensorOpSummaryEqualsRecomputingEveryGainFromScratch) {
  for (const double lambda : {0.3, 1.0}) {
    OnlineSummaryOps summary(lambda, sm::Concave{});
    expect_online_steps_equal_recomputation(lambda, [&](LayerCache& cache, int64_t window, int64_t k) {
      cache.evict(summary.discard(cache, cache.state("acc"), window, k));
    });
  }
}

}  // namespace
}  // namespace kvbench::policies
