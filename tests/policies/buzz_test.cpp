// BUZZ on constructed caches: one token per stride segment and it is the segment's argmax of
// accumulated attention, old tokens thin out by interval sampling with ŝ = ⌊(s+1)/2⌋, eviction
// only when old + new reach T, Remark 2's repeated sampling of long prompts, Theorem 3.1, log n.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "policies/buzz_sampling.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

SequenceInfo info_for(int64_t heads, int64_t budget) {
  SequenceInfo info;
  info.n_layers = 1; info.n_heads = heads; info.n_kv_heads = heads; info.head_dim = 2; info.budget = budget;
  return info;
}

void append(LayerCache& cache, int64_t from, int64_t count) {
  torch::Tensor k = torch::randn({cache.kv_heads(), count, 2});
  cache.append(k, k.clone(), torch::arange(from, from + count, torch::kInt64));
}

// Accumulated attention for every slot: the column sums of one forward, [heads, n].
void observe_scores(Policy& policy, LayerCache& cache, const torch::Tensor& column_sums) {
  AttentionStats stats;
  stats.column_sums = column_sums;
  policy.observe(0, cache, stats, Phase::kDecode);
}

std::vector<int64_t> positions(const LayerCache& cache, int64_t head) {
  std::vector<int64_t> out;
  for (int64_t j = 0; j < cache.size(); ++j) out.push_back(cache.positions()[head][j].item<int64_t>());
  return out;
}

// k = 2 sinks, w = 3 window, T = 10, s = 3 (ŝ = 2): budget = k + w + T = 15. kPaper: evict when
// old + new reach T and sample a long prompt chunk by chunk (Alg. 1 as written; the reference
// evicts only when they exceed T, in one pass: buzz_parity_test.cpp).
const nlohmann::json kSmall = {{"sinks", 2}, {"window", 3}, {"threshold", 10}, {"stride", 3}};
const nlohmann::json kPaper = {{"sinks", 2},      {"window", 3},       {"threshold", 10},
                               {"stride", 3},     {"trigger", "reaches"}, {"new_tokens", "chunked"}};

TEST(Buzz, TheoremThreeOneAndTheStrides) {
  EXPECT_NEAR(buzz::threshold_ratio(5), 26.0 / 6.0, 1e-12);  // the paper's worked example: 4.33
  EXPECT_EQ(buzz::threshold_ratio(4), 3.0);
  EXPECT_EQ(buzz::old_stride_for(5), 3);
  EXPECT_EQ(buzz::old_stride_for(4), 2);
  // Budget 200 with s = 5 and k = 4: w + T = 196 split 1 : 4.33.
  buzz::Layout layout = buzz::resolve_layout(200, 4, -1, -1, 5);
  EXPECT_EQ(layout.sinks, 4);
  EXPECT_EQ(layout.window, 37);
  EXPECT_EQ(layout.threshold, 159);
  EXPECT_NEAR(static_cast<double>(layout.threshold) / layout.window, 26.0 / 6.0, 0.1);
  // One of them given: the other fills the budget; both given must fit.
  EXPECT_EQ(buzz::resolve_layout(100, 4, 20, -1, 5).threshold, 76);
  EXPECT_EQ(buzz::resolve_layout(100, 4, -1, 50, 5).window, 46);
  EXPECT_THROW(buzz::resolve_layout(100, 4, 60, 60, 5), std::invalid_argument);
}

TEST(Buzz, KeepsTheArgmaxOfEverySegmentPerHead) {
  auto policy = make_policy("buzz", kPaper);
  policy->begin(info_for(2, 15));
  LayerCache cache(2, 2, torch::kFloat32);
  append(cache, 0, 15);
  // Middle = slots 2..11 (10 = T new tokens), segments of 3: [2,3,4] [5,6,7] [8,9,10] [11].
  // Head 0 piles its heaviest tokens into the first segment: a global top-4 would keep 2, 3, 4
  // and one more; BUZZ keeps exactly one per segment.
  torch::Tensor scores = torch::zeros({2, 15});
  const std::vector<float> h0 = {9, 9, 0.9f, 0.8f, 0.7f, 0.1f, 0.3f, 0.2f, 0.05f, 0.06f, 0.04f, 0.01f, 1, 1, 1};
  const std::vector<float> h1 = {9, 9, 0.1f, 0.2f, 0.3f, 0.6f, 0.5f, 0.4f, 0.2f, 0.2f, 0.9f, 0.5f, 1, 1, 1};
  for (int j = 0; j < 15; ++j) scores[0][j] = h0[j], scores[1][j] = h1[j];
  observe_scores(*policy, cache, scores);
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_EQ(positions(cache, 0), (std::vector<int64_t>{0, 1, 2, 6, 9, 11, 12, 13, 14}));
  EXPECT_EQ(positions(cache, 1), (std::vector<int64_t>{0, 1, 4, 5, 10, 11, 12, 13, 14}));
  // The accumulated attention travelled with the kept slots.
  EXPECT_FLOAT_EQ(cache.state("acc")[1][4].item<float>(), 0.9f);
}

TEST(Buzz, EvictsOnlyWhenTheBufferReachesTAndThinsOldTokensWithHalfStride) {
  auto policy = make_policy("buzz", kPaper);
  policy->begin(info_for(1, 15));
  LayerCache cache(1, 2, torch::kFloat32);
  // Token p gets accumulated attention score(p); within every segment the heaviest is the last
  // one of a new-token segment, so local max and interval sampling disagree everywhere.
  auto score = [](int64_t p) { return static_cast<float>(p % 3 == 1 ? 1.0 : 0.1); };
  std::vector<int64_t> sizes;
  for (int64_t p = 0; p < 21; ++p) {
    append(cache, p, 1);
    torch::Tensor s = torch::zeros({1, cache.size()});
    s[0][cache.size() - 1] = score(p);
    observe_scores(*policy, cache, s);
    policy->compress(0, cache, Phase::kDecode);
    sizes.push_back(cache.size());
    ASSERT_LE(cache.size(), 15);
  }
  // Grows untouched up to k + w + T − 1 = 14 tokens; at 15 (old + new = T = 10) the first
  // eviction keeps the 4 local maxima of [2,3,4] [5,6,7] [8,9,10] [11] -> 4, 7, 10, 11.
  for (int64_t p = 0; p < 14; ++p) EXPECT_EQ(sizes[p], p + 1) << "evicted before the threshold at token " << p;
  EXPECT_EQ(sizes[14], 2 + 4 + 3);
  // Then it buffers again: old 4 + new grows to T = 10 six tokens later (token 20).
  for (int64_t p = 15; p < 20; ++p) EXPECT_EQ(sizes[p], sizes[p - 1] + 1) << "evicted before the threshold at " << p;
  // Second eviction: old {4, 7, 10, 11} -> interval ŝ = 2 -> {4, 10}; new [12,13,14] [15,16,17]
  // -> local maxima 13, 16; window 18, 19, 20.
  EXPECT_EQ(positions(cache, 0), (std::vector<int64_t>{0, 1, 4, 10, 13, 16, 18, 19, 20}));
}

TEST(Buzz, NoLocalMaxAblationSamplesNewTokensByInterval) {
  nlohmann::json params = kPaper;
  params["local_max"] = false;
  auto policy = make_policy("buzz", params);
  policy->begin(info_for(1, 15));
  LayerCache cache(1, 2, torch::kFloat32);
  append(cache, 0, 15);
  observe_scores(*policy, cache, torch::rand({1, 15}));
  policy->compress(0, cache, Phase::kPrefill);
  EXPECT_EQ(positions(cache, 0), (std::vector<int64_t>{0, 1, 2, 5, 8, 11, 12, 13, 14}));
}

TEST(Buzz, LongPromptIsSampledUntilItFitsTheContainer) {
  // Remark 2 / Alg. 1 "goto 7": 40 tokens, middle 35 = chunks of T − |old| new tokens until
  // old + new < T: |old| 0→4 (10 new), 4→4 (6 new) three times, leaving 1 buffered new token.
  auto policy = make_policy("buzz", kPaper);
  policy->begin(info_for(1, 15));
  LayerCache cache(1, 2, torch::kFloat32);
  append(cache, 0, 40);
  observe_scores(*policy, cache, torch::rand({1, 40}));
  policy->compress(0, cache, Phase::kPrefill);
  std::vector<int64_t> kept = positions(cache, 0);
  ASSERT_EQ(kept.size(), 2u + 4u + 1u + 3u);
  EXPECT_EQ(kept[0], 0);
  EXPECT_EQ(kept[1], 1);
  EXPECT_EQ(kept[6], 36);  // the buffered new token
  EXPECT_EQ(std::vector<int64_t>(kept.end() - 3, kept.end()), (std::vector<int64_t>{37, 38, 39}));
}

TEST(Buzz, ByDefaultALongPromptIsSampledInOnePassAndEvictionWaitsForMoreThanT) {
  // The reference: 15 tokens (old + new = T = 10) stay; a 40-token prompt's 35 middle tokens are
  // sampled in one pass: ⌈35/3⌉ = 12 local maxima > T, so the old tokens are re-sampled with
  // ŝ = 2 until they fit (6), the budget being a hard cap.
  auto policy = make_policy("buzz", kSmall);
  EXPECT_EQ(policy->position_mode(), PositionMode::kCacheSlot);
  policy->begin(info_for(1, 15));
  LayerCache full(1, 2, torch::kFloat32);
  append(full, 0, 15);
  observe_scores(*policy, full, torch::rand({1, 15}));
  policy->compress(0, full, Phase::kPrefill);
  EXPECT_EQ(full.size(), 15);
  policy->begin(info_for(1, 15));
  LayerCache cache(1, 2, torch::kFloat32);
  append(cache, 0, 40);
  observe_scores(*policy, cache, torch::zeros({1, 40}));  // ties: every segment keeps its first token
  policy->compress(0, cache, Phase::kPrefill);
  // Local maxima 2, 5, …, 35 (12); interval ŝ = 2 -> 2, 8, 14, 20, 26, 32.
  EXPECT_EQ(positions(cache, 0), (std::vector<int64_t>{0, 1, 2, 8, 14, 20, 26, 32, 37, 38, 39}));
  EXPECT_EQ(make_policy("buzz", {{"positions", "original"}})->position_mode(), PositionMode::kOriginal);
  EXPECT_THROW(make_policy("buzz", {{"trigger", "soon"}}), std::invalid_argument);
  EXPECT_THROW(make_policy("buzz", {{"new_tokens", "all"}}), std::invalid_argument);
}

TEST(Buzz, LogNScalesLogitsByLog512OfTheKeysAttended) {
  auto plain = make_policy("buzz");
  EXPECT_EQ(plain->logit_scale(4096), 1.0);
  auto logn = make_policy("buzz", {{"logn", true}});
  EXPECT_NEAR(logn->logit_scale(512), 1.0, 1e-12);
  EXPECT_NEAR(logn->logit_scale(4096), 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(logn->logit_scale(64), 2.0 / 3.0, 1e-12);
}

TEST(Buzz, RejectsParametersThatCannotHoldABudget) {
  EXPECT_THROW(make_policy("buzz", {{"stride", 2}}), std::invalid_argument);  // ŝ = 1
  EXPECT_NO_THROW(make_policy("buzz", {{"stride", 2}, {"old_stride", 2}}));
  EXPECT_THROW(make_policy("buzz", {{"window", "big"}}), std::invalid_argument);
  auto policy = make_policy("buzz", {{"window", 100}});
  EXPECT_THROW(policy->begin(info_for(1, 50)), std::invalid_argument);
}

}  // namespace
}  // namespace kvbench::policies

#include "budget_probe.hpp"

namespace kvbench::policies {
namespace {

TEST(Buzz, AblationsKeepTheBudgetOnTheRealModel) {
  const std::vector<nlohmann::json> configs = {
      {{"logn", true}}, {{"local_max", false}}, {{"stride", 4}}, {{"stride", 3}, {"sinks", 1}},
      {{"stride", 5}, {"old_stride", 5}}, {{"window", 1}}, {{"threshold", 4}},
      {{"trigger", "reaches"}, {"new_tokens", "chunked"}}, {{"new_tokens", "chunked"}}, {{"positions", "original"}}};
  uint64_t seed = 7;
  for (const auto& params : configs) EXPECT_EQ(testing::first_budget_violation("buzz", params, seed++), "");
}

}  // namespace
}  // namespace kvbench::policies
