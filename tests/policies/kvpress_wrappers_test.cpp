// kvpress's wrappers on hand-built caches, each against its rule computed here from the press's
// scores: ChunkKV keeps whole chunks, the same on every head, ranked by the chunk's mean of the
// scores summed over heads; CriticalKV's stage 2 ranks by (score + ε)·‖vW_o‖₁ after its stage 1
// keeps the press's own best; kvpress's AdaKV evicts the layer's lowest scores across heads once
// each head's safeguard is set aside. (Recorded kvpress outputs: kvpress_parity_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "baselines_helpers.hpp"
#include "policies/keep_scored.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

using baseline_test::info_for;
using baseline_test::kept;

// n tokens, random keys/values with a fixed generator; positions 0..n-1.
LayerCache random_cache(int64_t kv_heads, int64_t n, int64_t d, uint64_t seed) {
  at::Generator g = at::detail::createCPUGenerator(seed);
  LayerCache cache(kv_heads, d, torch::kFloat32);
  cache.append(torch::randn({kv_heads, n, d}, g, torch::kFloat32), torch::randn({kv_heads, n, d}, g, torch::kFloat32),
               torch::arange(n, torch::kInt64));
  return cache;
}

std::set<int64_t> top(const torch::Tensor& scores, int64_t k) {
  std::vector<int64_t> order(scores.size(0));
  std::iota(order.begin(), order.end(), 0);
  auto s = scores.accessor<float, 1>();
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return s[a] > s[b]; });
  return {order.begin(), order.begin() + k};
}

TEST(KvpressWrappers, ChunkKvKeepsTheBestWholeChunksOnEveryHead) {
  const int64_t kv = 2, n = 47, d = 4, chunk = 5;
  const double ratio = 0.6;
  LayerCache cache = random_cache(kv, n, d, 11);
  // kvpress's rule from KnormPress's scores: −‖k‖ summed over heads, averaged per chunk.
  const torch::Tensor per_token = cache.keys().norm(2, -1).neg().sum(0);
  std::vector<float> chunk_means;
  for (int64_t c = 0; c * chunk < n; ++c) chunk_means.push_back(per_token.narrow(0, c * chunk, std::min(chunk, n - c * chunk)).mean().item<float>());
  const int64_t chunks = static_cast<int64_t>(chunk_means.size());  // 9 complete + 1 partial
  const int64_t kept_chunks = std::max<int64_t>(1, static_cast<int64_t>(chunks * (1 - ratio)));
  std::set<int64_t> want;
  for (int64_t c : top(torch::tensor(chunk_means), kept_chunks))
    for (int64_t j = c * chunk; j < std::min(n, (c + 1) * chunk); ++j) want.insert(j);

  auto policy = make_policy("kvpress:chunk", {{"press", "kvpress:knorm"}, {"chunk_length", chunk}});
  SequenceInfo info = info_for(1, kv, kv, Budget::compression_ratio(ratio).resolve(n), n);
  info.head_dim = d;
  info.compression_ratio = ratio;
  policy->begin(info);
  policy->compress(0, cache, Phase::kPrefill);
  for (int64_t h = 0; h < kv; ++h) EXPECT_EQ(kept(cache, h), want) << "head " << h;
  EXPECT_LE(cache.size(), policy->layer_budget(0));
}

TEST(KvpressWrappers, CriticalKvRanksByTheValuesThroughTheOutputProjection) {
  const int64_t heads = 4, kv = 2, n = 40, d = 4, dim = 6, budget = 16;
  LayerCache cache = random_cache(kv, n, d, 12);
  at::Generator g = at::detail::createCPUGenerator(13);
  const torch::Tensor wo = torch::randn({dim, heads * d}, g, torch::kFloat32);
  const double first_stage = 0.25, eps = 1e-4;
  // The rule: s = −‖k‖ (KnormPress); stage 1 keeps each head's int(B·0.25) best; stage 2 ranks
  // the rest by (s + ε)·mean over the group of ‖v W_o,h‖₁.
  const torch::Tensor s = cache.keys().norm(2, -1).neg();  // [kv, n]
  const torch::Tensor v = cache.values().repeat_interleave(heads / kv, 0);
  const torch::Tensor wo_heads = wo.t().reshape({heads, d, dim});
  const torch::Tensor l1 = torch::bmm(v, wo_heads).abs().sum(-1).reshape({kv, heads / kv, n}).mean(1);
  const torch::Tensor stage2 = (s + eps) * l1;

  auto policy = make_policy("kvpress:critical", {{"press", "kvpress:knorm"}, {"first_stage_ratio", first_stage}});
  SequenceInfo info = info_for(1, heads, kv, budget, n);
  info.head_dim = d;
  policy->begin(info);
  AttentionStats stats;
  stats.output_projection = wo;
  stats.n_queries = n;  // the prompt's forward: every token is new
  policy->observe(0, cache, stats, Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  for (int64_t h = 0; h < kv; ++h) {
    std::set<int64_t> want = top(s[h].contiguous(), static_cast<int64_t>(budget * first_stage));
    torch::Tensor rest = stage2[h].clone();
    for (int64_t j : want) rest[j] = -INFINITY;
    for (int64_t j : top(rest, budget - static_cast<int64_t>(want.size()))) want.insert(j);
    EXPECT_EQ(kept(cache, h), want) << "head " << h;
  }
  // W_o matters: the ranking by the press alone differs on some head.
  bool differs = false;
  for (int64_t h = 0; h < kv; ++h) differs |= top(s[h].contiguous(), budget) != kept(cache, h);
  EXPECT_TRUE(differs);
}

TEST(KvpressWrappers, AdaKvEvictsTheLayersLowestScoresAfterEachHeadsSafeguard) {
  const int64_t kv = 3, n = 30, d = 4, budget = 10;
  LayerCache cache = random_cache(kv, n, d, 14);
  const torch::Tensor s = cache.keys().norm(2, -1).neg();  // KnormPress
  const double alpha = 0.3;
  const int64_t safe = static_cast<int64_t>(budget * alpha);
  torch::Tensor adjusted = s.clone();
  for (int64_t h = 0; h < kv; ++h)
    for (int64_t j : top(s[h].contiguous(), safe)) adjusted[h][j] = FLT_MAX;
  const std::set<int64_t> layer_top = top(adjusted.reshape({kv * n}).contiguous(), kv * budget);

  auto policy = make_policy("kvpress:adakv", {{"press", "kvpress:knorm"}, {"alpha_safeguard", alpha}});
  SequenceInfo info = info_for(1, kv, kv, budget, n);
  info.head_dim = d;
  policy->begin(info);
  policy->compress(0, cache, Phase::kPrefill);
  std::set<int64_t> sizes;
  for (int64_t h = 0; h < kv; ++h) {
    std::set<int64_t> want;
    for (int64_t j = 0; j < n; ++j)
      if (layer_top.count(h * n + j)) want.insert(j);
    EXPECT_EQ(kept(cache, h), want) << "head " << h;
    EXPECT_GE(want.size(), static_cast<size_t>(safe));
    sizes.insert(want.size());
  }
  EXPECT_GT(sizes.size(), 1u) << "the heads should keep different counts";
}

// KeyDiff's score of every token of `keys` [n, d] among those tokens: −cos(k, mean unit key).
torch::Tensor keydiff_scores(const torch::Tensor& keys) {
  const torch::Tensor unit = keys / keys.norm(2, -1, true).clamp_min(1e-12);
  return torch::cosine_similarity(keys, unit.mean(0, true), -1, 1e-8).neg();
}

TEST(KvpressWrappers, BlockPressRescoresTheKeptTokensWithEachNextBlock) {
  const int64_t kv = 2, n = 37, d = 4, block = 6, budget = 10;
  LayerCache cache = random_cache(kv, n, d, 15);
  auto policy = make_policy("kvpress:block", {{"press", "kvpress:keydiff"}, {"block_size", block}});
  SequenceInfo info = info_for(1, kv, kv, budget, n);
  info.head_dim = d;
  const torch::Tensor keys = cache.keys().clone();
  policy->begin(info);
  policy->compress(0, cache, Phase::kPrefill);
  bool differs_from_one_shot = false;
  for (int64_t h = 0; h < kv; ++h) {
    std::vector<int64_t> kept_now(budget);
    std::iota(kept_now.begin(), kept_now.end(), 0);
    for (int64_t start = budget; start < n; start += block) {
      std::vector<int64_t> current = kept_now;
      for (int64_t j = start; j < std::min(n, start + block); ++j) current.push_back(j);
      const torch::Tensor s = keydiff_scores(keys[h].index_select(0, torch::tensor(current)));
      kept_now.clear();
      for (int64_t i : top(s, budget)) kept_now.push_back(current[i]);
    }
    const std::set<int64_t> want(kept_now.begin(), kept_now.end());
    EXPECT_EQ(kept(cache, h), want) << "head " << h;
    differs_from_one_shot |= want != top(keydiff_scores(keys[h]), budget);
  }
  EXPECT_TRUE(differs_from_one_shot) << "blocks should change what KeyDiff keeps here";
  EXPECT_THROW(make_policy("kvpress:block", {{"press", "kvpress:snapkv"}}), std::invalid_argument);
}

// DecodingPress leaves the prompt alone and, every compression_interval decode steps, cuts the
// whole cache to the budget by the press's scores (KnormPress: the lowest key norms).
TEST(KvpressWrappers, DecodingPressCompressesEveryIntervalDecodeStepsToTheBudget) {
  const int64_t kv = 2, prompt = 30, d = 4, budget = 12, interval = 5;
  LayerCache cache = random_cache(kv, prompt, d, 16);
  auto policy = make_policy("kvpress:decoding_knorm", {{"compression_interval", interval}});
  SequenceInfo info = info_for(1, kv, kv, budget, prompt);
  info.head_dim = d;
  policy->begin(info);
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_EQ(cache.size(), prompt) << "the prompt is never compressed";
  at::Generator g = at::detail::createCPUGenerator(17);
  for (int64_t step = 1; step <= 2 * interval; ++step) {
    const torch::Tensor k = torch::randn({kv, 1, d}, g, torch::kFloat32);
    cache.append(k, k.clone(), torch::tensor({prompt + step - 1}, torch::kInt64));
    const torch::Tensor keys = cache.keys().clone(), positions = cache.positions().clone();
    policy->compress(0, cache, Phase::kDecode);
    ASSERT_LE(cache.size(), policy->layer_budget(0));
    if (step % interval != 0) {
      EXPECT_EQ(cache.size(), keys.size(1)) << "step " << step;
      continue;
    }
    EXPECT_EQ(cache.size(), budget) << "step " << step;
    for (int64_t h = 0; h < kv; ++h) {
      std::set<int64_t> want;
      for (int64_t j : top(keys[h].norm(2, -1).neg().contiguous(), budget)) want.insert(positions[positions.size(0) == 1 ? 0 : h][j].item<int64_t>());
      EXPECT_EQ(kept(cache, h), want) << "step " << step << " head " << h;
    }
  }
}

// DecodingPress around AdaKVPress: every compression_interval decode steps the cache is cut as
// kvpress:adakv cuts it (the layer's lowest scores across heads, each head's safeguard kept), and
// the heads come out ragged; between two compressions nothing leaves.
TEST(KvpressWrappers, DecodingAdaKvCutsTheCacheAsAdaKvEveryInterval) {
  const int64_t kv = 4, prompt = 24, d = 4, budget = 10, interval = 4;
  LayerCache cache = random_cache(kv, prompt, d, 21);
  auto policy = make_policy("kvpress:decoding_adakv", {{"press", "kvpress:knorm"}, {"compression_interval", interval}});
  SequenceInfo info = info_for(1, kv, kv, budget, prompt);
  info.head_dim = d;
  policy->begin(info);
  at::Generator g = at::detail::createCPUGenerator(22);
  bool ragged = false;
  for (int64_t step = 1; step <= interval + 2; ++step) {
    const torch::Tensor k = torch::randn({kv, 1, d}, g, torch::kFloat32) * (1 + step % 3);
    cache.append(k, k.clone(), torch::tensor({prompt + step - 1}, torch::kInt64));
    // What kvpress:adakv keeps of the cache as it is now (whole before the first compression).
    LayerCache expected(kv, d, torch::kFloat32);
    expected.append(cache.keys().clone(), cache.values().clone(), cache.positions()[0].clone());
    auto ada = make_policy("kvpress:adakv", {{"press", "kvpress:knorm"}});
    ada->begin(info);
    ada->compress(0, expected, Phase::kDecode);
    std::vector<std::set<int64_t>> before;
    for (int64_t h = 0; h < kv; ++h) before.push_back(kept(cache, h));
    policy->compress(0, cache, Phase::kDecode);
    ASSERT_LE(cache.max_head_length(), policy->layer_budget(0));
    for (int64_t h = 0; h < kv; ++h) {
      if (step < interval) EXPECT_EQ(kept(cache, h), before[h]) << "step " << step << " head " << h;
      if (step == interval) EXPECT_EQ(kept(cache, h), kept(expected, h)) << "head " << h;
    }
    if (step == interval) {
      EXPECT_EQ(valid_counts(cache).sum().item<int64_t>(), kv * budget);
      ragged = cache.max_head_length() > budget;
    }
  }
  EXPECT_TRUE(ragged) << "the case should give some head more than the uniform budget";
}

}  // namespace
}  // namespace kvbench::policies

namespace kvbench::policies {
namespace {

// CompressionRatioDecodingPress: every compression_interval decode steps the cache is cut to
// max(1, int(seen · (1 − r))) by the press's scores, seen = the step's position + 1; a cache
// already at or below that target is left as it is (kvpress's _find_target_compression_ratio: 0).
TEST(KvpressWrappers, CompressionRatioDecodingKeepsAFractionOfTheTokensSeen) {
  const int64_t kv = 2, prompt = 30, d = 4, interval = 5;
  for (const double ratio : {0.5, 0.1}) {
    LayerCache cache = random_cache(kv, prompt, d, 16);
    auto policy = make_policy("kvpress:compression_ratio_decoding", {{"compression_interval", interval}});
    SequenceInfo info = baseline_test::info_for(1, kv, kv, Budget::compression_ratio(ratio).resolve(prompt), prompt);
    info.compression_ratio = ratio;
    info.head_dim = d;
    policy->begin(info);
    policy->compress(0, cache, Phase::kPrefill);
    EXPECT_EQ(cache.size(), prompt) << "the prompt is never compressed";
    at::Generator g = at::detail::createCPUGenerator(23);
    bool left_alone = false;
    for (int64_t step = 1; step <= 3 * interval; ++step) {
      const torch::Tensor k = torch::randn({kv, 1, d}, g, torch::kFloat32);
      cache.append(k, k.clone(), torch::tensor({prompt + step - 1}, torch::kInt64));
      const torch::Tensor keys = cache.keys().clone(), positions = cache.positions().clone();
      const int64_t before = cache.size();
      policy->compress(0, cache, Phase::kDecode);
      ASSERT_LE(cache.size(), policy->layer_budget(0)) << "ratio " << ratio << " step " << step;
      if (step % interval != 0) {
        EXPECT_EQ(cache.size(), before) << "step " << step;
        continue;
      }
      const int64_t target = std::max<int64_t>(1, static_cast<int64_t>((prompt + step) * (1.0 - ratio)));
      if (before <= target) {
        EXPECT_EQ(cache.size(), before) << "ratio " << ratio << " step " << step;
        left_alone = true;
        continue;
      }
      EXPECT_EQ(cache.size(), target) << "ratio " << ratio << " step " << step;
      for (int64_t h = 0; h < kv; ++h) {
        std::set<int64_t> want;
        for (int64_t j : top(keys[h].norm(2, -1).neg().contiguous(), target)) want.insert(positions[positions.size(0) == 1 ? 0 : h][j].item<int64_t>());
        EXPECT_EQ(kept(cache, h), want) << "ratio " << ratio << " step " << step << " head " << h;
      }
    }
    EXPECT_EQ(left_alone, ratio == 0.1) << "at 10% the cache outgrows the target only at the first compression";
  }
  SequenceInfo tokens = baseline_test::info_for(1, 2, 2, 12, 30);
  EXPECT_THROW(make_policy("kvpress:compression_ratio_decoding")->begin(tokens), std::invalid_argument);
}

}  // namespace
}  // namespace kvbench::policies

namespace kvbench::policies {
namespace {

// PrefillDecodingPress: the prompt is cut by the prefilling press alone (what that press keeps by
// itself), each decode step goes to the decoding press (every interval the cache to the budget by
// its scores); with decoding_press none, generated tokens stay.
TEST(KvpressWrappers, PrefillDecodingGivesThePromptToOnePressAndTheStepsToTheOther) {
  const int64_t kv = 2, prompt = 30, d = 4, budget = 12, interval = 4;
  SequenceInfo info = baseline_test::info_for(1, kv, kv, budget, prompt);
  info.head_dim = d;
  auto alone = make_policy("kvpress:knorm");
  LayerCache reference = random_cache(kv, prompt, d, 21);
  alone->begin(info);
  alone->compress(0, reference, Phase::kPrefill);

  auto policy = make_policy("kvpress:prefill_decoding", {{"prefilling_press", "kvpress:knorm"},
                                                         {"decoding_press", "kvpress:decoding_keydiff"},
                                                         {"decoding_params", {{"compression_interval", interval}}}});
  LayerCache cache = random_cache(kv, prompt, d, 21);
  policy->begin(info);
  policy->compress(0, cache, Phase::kPrefill);
  for (int64_t h = 0; h < kv; ++h) EXPECT_EQ(baseline_test::kept(cache, h), baseline_test::kept(reference, h)) << "head " << h;
  EXPECT_EQ(cache.size(), budget);

  auto decoding = make_policy("kvpress:decoding_keydiff", {{"compression_interval", interval}});
  SequenceInfo after = info;
  after.prompt_len = budget;
  decoding->begin(after);
  at::Generator g = at::detail::createCPUGenerator(22);
  for (int64_t step = 1; step <= 2 * interval; ++step) {
    const torch::Tensor k = torch::randn({kv, 1, d}, g, torch::kFloat32);
    const torch::Tensor position = torch::tensor({prompt + step - 1}, torch::kInt64);
    cache.append(k, k.clone(), position);
    reference.append(k, k.clone(), position);
    policy->compress(0, cache, Phase::kDecode);
    decoding->compress(0, reference, Phase::kDecode);
    ASSERT_LE(cache.size(), policy->layer_budget(0));
    for (int64_t h = 0; h < kv; ++h) EXPECT_EQ(baseline_test::kept(cache, h), baseline_test::kept(reference, h)) << "step " << step;
    if (step % interval == 0) EXPECT_EQ(cache.size(), budget) << "step " << step;
  }

  auto keep_generated = make_policy("kvpress:prefill_decoding", {{"prefilling_press", "kvpress:knorm"}});
  keep_generated->begin(info);
  EXPECT_EQ(keep_generated->layer_budget(0), kUnlimitedTokens);
  EXPECT_THROW(make_policy("kvpress:prefill_decoding", {{"decoding_press", "kvpress:knorm"}}), std::invalid_argument);
  EXPECT_THROW(make_policy("kvpress:prefill_decoding", {{"prefilling_press", "kvpress:decoding_knorm"}}), std::invalid_argument);
}

}  // namespace
}  // namespace kvbench::policies
