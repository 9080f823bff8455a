// The cache's one eviction operation: keep() gathers keys, values, positions and every per-slot
// state tensor with the same indices, per head or shared, ragged or not.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <limits>

#include "policies/budget.hpp"
#include "policies/gqa_mode.hpp"
#include "policies/head_reduce.hpp"
#include "policies/kv_cache.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies {
namespace {

LayerCache numbered_cache(int64_t heads, int64_t n) {
  LayerCache cache(heads, 2, torch::kFloat32, /*initial_capacity=*/2);
  // key[h, j] = (100h + j, -(100h + j)) so every slot is identifiable after gathers.
  torch::Tensor id = (torch::arange(heads).reshape({heads, 1}) * 100 + torch::arange(n).reshape({1, n})).to(torch::kFloat32);
  torch::Tensor k = torch::stack({id, -id}, -1);
  cache.append(k, k * 2, torch::arange(n, torch::kInt64));
  return cache;
}

TEST(LayerCache, KeepGathersKeysValuesPositionsAndStateTogether) {
  LayerCache cache = numbered_cache(2, 6);
  torch::Tensor acc = cache.state("acc");
  acc.copy_(torch::arange(12, torch::kFloat32).reshape({2, 6}));
  cache.keep(torch::tensor({0, 2, 5, 1, 3, 4}, torch::kInt64).reshape({2, 3}));
  ASSERT_EQ(cache.size(), 3);
  EXPECT_TRUE(torch::equal(cache.positions(), torch::tensor({0, 2, 5, 1, 3, 4}, torch::kInt64).reshape({2, 3})));
  EXPECT_FLOAT_EQ(cache.keys()[1][2][0].item<float>(), 104.0f);
  EXPECT_FLOAT_EQ(cache.values()[1][2][1].item<float>(), -208.0f);
  EXPECT_TRUE(torch::equal(cache.state("acc"), torch::tensor({0.f, 2.f, 5.f, 7.f, 9.f, 10.f}).reshape({2, 3})));
}

TEST(LayerCache, AppendAfterKeepGrowsAndZeroesNewState) {
  LayerCache cache = numbered_cache(1, 5);
  cache.state("acc").fill_(1.0f);
  cache.keep(torch::tensor({{1, 3}}, torch::kInt64));
  torch::Tensor k = torch::full({1, 40, 2}, 7.0f);
  cache.append(k, k, torch::arange(100, 140, torch::kInt64));  // beyond the initial capacity
  ASSERT_EQ(cache.size(), 42);
  EXPECT_EQ(cache.positions()[0][1].item<int64_t>(), 3);
  EXPECT_EQ(cache.positions()[0][41].item<int64_t>(), 139);
  EXPECT_FLOAT_EQ(cache.state("acc")[0][1].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(cache.state("acc")[0][2].item<float>(), 0.0f);
}

// The memory the cache takes: every buffer at its capacity (doubling when full), per-slot state
// included; evictions keep the buffers.
TEST(LayerCache, AllocatedBytesCountEveryBufferAtItsCapacity) {
  LayerCache cache(3, 4, torch::kFloat32, /*initial_capacity=*/8);
  const int64_t per_slot = 3 * (2 * 4 * 4 + 8 + 1);  // per head: keys and values, an int64 position, a bool
  EXPECT_EQ(cache.allocated_bytes(), 8 * per_slot);
  torch::Tensor k = torch::ones({3, 9, 4});
  cache.append(k, k, torch::arange(9, torch::kInt64));  // past 8 slots: doubled to 16
  EXPECT_EQ(cache.allocated_bytes(), 16 * per_slot);
  cache.state("acc");  // [3, 16] float32
  EXPECT_EQ(cache.allocated_bytes(), 16 * per_slot + 3 * 16 * 4);
  cache.keep(torch::tensor({{0, 8}}, torch::kInt64));
  EXPECT_EQ(cache.logical_bytes(), 3 * 2 * 2 * 4 * 4);
  EXPECT_EQ(cache.allocated_bytes(), 16 * per_slot + 3 * 16 * 4);
}

TEST(LayerCache, RaggedHeadsMaskTheirSurplusSlots) {
  LayerCache cache = numbered_cache(2, 6);
  cache.keep(torch::tensor({0, 1, 2, 4, 5, 5}, torch::kInt64).reshape({2, 3}), torch::tensor({3, 2}, torch::kInt64));
  EXPECT_FALSE(cache.all_valid());
  EXPECT_TRUE(torch::equal(cache.head_lengths(), torch::tensor({3, 2}, torch::kInt64)));
  EXPECT_EQ(cache.max_head_length(), 3);
  EXPECT_EQ(cache.logical_bytes(), 2 * 5 * 2 * 4);
  // A masked slot never wins a selection.
  torch::Tensor scores = torch::tensor({0.f, 0.f, 0.f, 0.f, 0.f, 9.f}).reshape({2, 3});
  torch::Tensor masked = mask_invalid(cache, scores);
  EXPECT_TRUE(std::isinf(masked[1][2].item<float>()));
}

TEST(LayerCache, SharedIndicesKeepTheSameSlotsOnEveryHead) {
  LayerCache cache = numbered_cache(3, 5);
  cache.keep(torch::tensor({{0, 4}}, torch::kInt64));
  for (int h = 0; h < 3; ++h) {
    EXPECT_EQ(cache.positions()[h][0].item<int64_t>(), 0);
    EXPECT_EQ(cache.positions()[h][1].item<int64_t>(), 4);
  }
  EXPECT_THROW(cache.keep(torch::tensor({{0, 7}}, torch::kInt64)), std::out_of_range);
}

TEST(Selection, TopWithRecentKeepsTheWindowAndTheHeaviest) {
  LayerCache cache = numbered_cache(1, 10);
  torch::Tensor scores = torch::tensor({5.f, 0.f, 9.f, 1.f, 0.f, 7.f, 0.f, 0.f, 100.f, 100.f}).reshape({1, 10});
  keep_top_with_recent(cache, scores, 5, 2);
  EXPECT_TRUE(torch::equal(cache.positions(), torch::tensor({{0, 2, 5, 8, 9}}, torch::kInt64)));
}

TEST(Selection, TiesGoToTheEarlierSlot) {
  torch::Tensor idx = top_k_slots(torch::tensor({{1.f, 2.f, 2.f, 2.f}}), 2);
  EXPECT_TRUE(torch::equal(idx, torch::tensor({{1, 2}}, torch::kInt64)));
}

// The evicted complement of a top-k over the arrival order, for every sign, zero, infinity and
// tie: a random sweep against top_k_slots, plus the ties named.
TEST(Selection, LowestScoredSlotsEvictWhatTopKOverArrivalOrderDrops) {
  const float inf = std::numeric_limits<float>::infinity();
  torch::Tensor scores = torch::tensor({{0.f, -0.f, 2.f, -1.f, -inf, inf, 2.f, -1.f}});
  torch::Tensor positions = torch::tensor({{7, 0, 5, 3, 1, 6, 2, 4}}, torch::kInt64);  // slot 1 is the oldest
  auto evicted = [&](int64_t e) {
    torch::Tensor slots = std::get<0>(lowest_scored_slots(scores, positions, e).sort(-1));
    return std::vector<int64_t>(slots.data_ptr<int64_t>(), slots.data_ptr<int64_t>() + e);
  };
  EXPECT_EQ(evicted(1), (std::vector<int64_t>{4}));           // -inf
  EXPECT_EQ(evicted(2), (std::vector<int64_t>{4, 7}));        // the tie at -1 goes to the newer (position 4)
  EXPECT_EQ(evicted(4), (std::vector<int64_t>{0, 3, 4, 7}));  // +0 and -0 tie: the newer (position 7)
  torch::Generator gen = at::detail::createCPUGenerator(5);
  for (int trial = 0; trial < 50; ++trial) {
    const int64_t n = 40, e = 1 + trial % 7;
    torch::Tensor s = torch::randint(-3, 4, {3, n}, gen).to(torch::kFloat32) * 0.5;  // many ties
    torch::Tensor pos = torch::stack({torch::randperm(n, gen), torch::randperm(n, gen), torch::randperm(n, gen)}) * 1000;
    torch::Tensor by_age = std::get<1>(pos.sort(1));
    torch::Tensor kept = by_age.gather(1, top_k_slots(s.gather(1, by_age), n - e));
    torch::Tensor dropped = torch::ones({3, n}, torch::kBool).scatter_(1, kept, false);
    torch::Tensor named = torch::zeros({3, n}, torch::kBool).scatter_(1, lowest_scored_slots(s, pos, e), true);
    ASSERT_TRUE(torch::equal(dropped, named)) << "trial " << trial;
  }
}

// The mask form of top_k_slots (an order statistic, no sort) chooses the same slots, ties to the
// lower column, in float32 and float64, with ±inf and k from 0 to n.
TEST(Selection, TopKMaskChoosesWhatTopKSlotsChooses) {
  const float inf = std::numeric_limits<float>::infinity();
  torch::Tensor named = torch::tensor({{2.f, -inf, 2.f, inf, 0.f, -0.f, 2.f}});
  EXPECT_TRUE(torch::equal(top_k_mask(named, 3), torch::tensor({{true, false, true, true, false, false, false}})));
  EXPECT_TRUE(torch::equal(top_k_mask(named, 5), torch::tensor({{true, false, true, true, true, false, true}})));
  torch::Generator gen = at::detail::createCPUGenerator(9);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t n = 33, k = trial % (n + 1);
    torch::Tensor s = torch::randint(-2, 3, {4, n}, gen).to(trial % 2 ? torch::kFloat64 : torch::kFloat32);
    torch::Tensor expected = torch::zeros({4, n}, torch::kBool);
    if (k > 0) expected.scatter_(1, top_k_slots(s, k), true);
    ASSERT_TRUE(torch::equal(top_k_mask(s, k), expected)) << "trial " << trial << ", k " << k;
  }
}

// The paths off the CPU (tensor ops, nothing read back) choose what the native CPU paths choose.
TEST(Selection, TheTensorOpPathsChooseWhatTheCpuPathsChoose) {
  torch::Generator gen = at::detail::createCPUGenerator(11);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t rows = 3, n = 29, k = trial % (n + 1), e = 1 + trial % 9;
    // Few distinct values: many ties, ±0 and ±inf among them.
    torch::Tensor s = torch::randint(-3, 4, {rows, n}, gen).to(torch::kFloat32);
    s.masked_fill_(s == 3, std::numeric_limits<float>::infinity()).masked_fill_(s == -3, -std::numeric_limits<float>::infinity());
    s.masked_fill_(s == 2, -0.0f);
    ASSERT_TRUE(torch::equal(top_k_mask_by_ops(s, k), top_k_mask(s, k))) << "trial " << trial;
    torch::Tensor positions = torch::randperm(1000, gen).narrow(0, 0, rows * n).reshape({rows, n});
    ASSERT_TRUE(torch::equal(lowest_scored_slots_by_ops(s, positions, e, /*lowest_first=*/true),
                             lowest_scored_slots(s, positions, e, /*lowest_first=*/true)))
        << "trial " << trial;
    torch::Tensor perm = torch::stack({torch::randperm(n, gen), torch::randperm(n, gen), torch::randperm(n, gen)});
    torch::Tensor valid = torch::randint(0, 2, {rows, n}, gen).to(torch::kBool);
    ASSERT_TRUE(torch::equal(valid_first_by_ops(perm, valid), valid_first(perm, valid))) << "trial " << trial;
  }
}

TEST(Selection, ValidFirstIsAStablePartitionOfTheArrivalOrder) {
  // Slots 0 and 2 valid; arrival order 3, 0, 2, 1: the valid in that order, then the holes.
  torch::Tensor perm = torch::tensor({{3, 0, 2, 1}}, torch::kInt64);
  torch::Tensor valid = torch::tensor({{true, false, true, false}});
  torch::Tensor expected = torch::tensor({{0, 2, 3, 1}}, torch::kInt64);
  EXPECT_TRUE(torch::equal(valid_first(perm, valid), expected));
  EXPECT_TRUE(torch::equal(valid_first_by_ops(perm, valid), expected));
}

TEST(Selection, HostSlotsAreOneRowOnTheDevice) {
  torch::Tensor t = host_slots_on({5, 0, 3}, torch::kCPU);
  EXPECT_EQ(t.scalar_type(), torch::kInt64);
  EXPECT_TRUE(torch::equal(t, torch::tensor({{5, 0, 3}}, torch::kInt64)));
  EXPECT_EQ(host_slots_on({}, torch::kCPU).sizes(), (std::vector<int64_t>{1, 0}));
}

TEST(HeadReduce, GroupsQueryHeadsOfAKvHead) {
  torch::Tensor s = torch::tensor({1.f, 3.f, 10.f, 20.f}).reshape({4, 1});  // 4 query heads, 2 KV heads
  EXPECT_TRUE(torch::allclose(reduce_to_kv_heads(s, 2, HeadReduce::kMean), torch::tensor({{2.f}, {15.f}})));
  EXPECT_TRUE(torch::allclose(reduce_to_kv_heads(s, 2, HeadReduce::kMax), torch::tensor({{3.f}, {20.f}})));
  EXPECT_TRUE(torch::allclose(reduce_to_kv_heads(s, 2, HeadReduce::kSum), torch::tensor({{4.f}, {30.f}})));
}

TEST(GqaMode, RepeatRowsIsRepeatInterleave) {
  torch::Tensor kv = torch::arange(2 * 3 * 4, torch::kFloat32).reshape({2, 3, 4});
  torch::Tensor positions = torch::arange(6, torch::kInt64).reshape({2, 3});
  EXPECT_TRUE(torch::equal(repeat_rows(kv, 3), kv.repeat_interleave(3, 0)));
  EXPECT_TRUE(torch::equal(repeat_rows(positions, 2), positions.repeat_interleave(2, 0)));
  EXPECT_TRUE(torch::equal(repeat_rows(positions, 1), positions));
}

TEST(Budget, ParsesTokensFractionsAndFull) {
  EXPECT_EQ(Budget::parse("512").resolve(10000), 512);
  EXPECT_EQ(Budget::parse("20%").resolve(1000), 200);
  EXPECT_EQ(Budget::parse("20%").to_string(), "20%");
  EXPECT_TRUE(Budget::parse("full").is_unlimited());
  EXPECT_THROW(Budget::parse("12x"), std::invalid_argument);
  EXPECT_THROW(Budget::parse("0"), std::invalid_argument);
  EXPECT_THROW(Budget::parse("150%"), std::invalid_argument);
  // The bad percentage is named as written, not as the fraction 1.500000.
  for (const char* bad : {"150%", "0%", "nan%", "-5%"}) {
    try {
      Budget::parse(bad);
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), std::string("budget percentage must be in (0, 100%], got '") + bad + "'");
    }
  }
}

// kvpress's compression ratio: n_kept = int(k_len * (1 - ratio)) in doubles, truncated — so
// ratio 0.9 of 100 tokens keeps 9 (1 - 0.9 = 0.0999…), as ScorerPress.compress does.
TEST(Budget, CompressionRatioTruncatesAsKvpress) {
  EXPECT_EQ(Budget::parse("ratio:0.5").resolve(101), 50);
  EXPECT_EQ(Budget::parse("ratio:0.9").resolve(100), 9);
  EXPECT_EQ(Budget::parse("ratio:0.7").resolve(100), 30);
  EXPECT_EQ(Budget::parse("ratio:0").resolve(77), 77);
  EXPECT_EQ(Budget::parse("ratio:0.875").to_string(), "ratio:0.875");
  EXPECT_EQ(Budget::parse("ratio:0.123456789").to_string(), "ratio:0.123456789");
  EXPECT_TRUE(Budget::parse("ratio:0.25").is_relative());
  for (const char* bad : {"ratio:1", "ratio:-0.1", "ratio:", "ratio:0.5x", "ratio:nan"}) EXPECT_THROW(Budget::parse(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace kvbench::policies
