// SlotOrder::kAny: eviction moves only the slots it must (the survivors above the new size fill
// the holes below it), keys, values, positions and per-slot state travel together, and the
// selection helpers read "older"/"newer" from the positions, so a policy keeps the same tokens
// as on an arrival-ordered cache.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "baselines_helpers.hpp"
#include "policies/keep_scored.hpp"
#include "policies/registry.hpp"
#include "policies/slot_ages.hpp"

namespace kvbench::policies {
namespace {

using baseline_test::kept;

// key[h, slot] = (100h + position, -(100h + position)), value = 2·key, state "acc" = position.
LayerCache any_order_cache(int64_t heads, int64_t n) {
  LayerCache cache(heads, 2, torch::kFloat32, 4);
  cache.set_slot_order(SlotOrder::kAny);
  torch::Tensor id = (torch::arange(heads).reshape({heads, 1}) * 100 + torch::arange(n).reshape({1, n})).to(torch::kFloat32);
  torch::Tensor k = torch::stack({id, -id}, -1);
  cache.append(k, k * 2, torch::arange(n, torch::kInt64));
  cache.state("acc").copy_(torch::arange(n, torch::kFloat32).expand({heads, n}));
  return cache;
}

// Every slot's key, value and state still belong to the position it holds.
void expect_consistent(const LayerCache& cache) {
  torch::Tensor pos = cache.positions().to(torch::kFloat32);
  torch::Tensor head = torch::arange(cache.kv_heads()).reshape({-1, 1}).to(torch::kFloat32) * 100;
  EXPECT_TRUE(torch::equal(cache.keys().select(2, 0), head + pos));
  EXPECT_TRUE(torch::equal(cache.values().select(2, 1), -2 * (head + pos)));
  EXPECT_TRUE(torch::equal(const_cast<LayerCache&>(cache).state("acc"), pos));
}

TEST(SlotOrderAny, EvictMovesOnlyTheSurvivorsAboveTheNewSize) {
  LayerCache cache = any_order_cache(2, 10);
  cache.evict(torch::tensor({{2, 9}}, torch::kInt64));  // 9 is above the new size 8: nothing moves into 2 from it
  ASSERT_EQ(cache.size(), 8);
  // Slot 2 (a hole) received slot 8, the only survivor above the new size; every other slot stayed.
  EXPECT_TRUE(torch::equal(cache.positions()[0], torch::tensor({0, 1, 8, 3, 4, 5, 6, 7}, torch::kInt64)));
  expect_consistent(cache);
  EXPECT_FALSE(cache.in_arrival_order());
  EXPECT_TRUE(torch::equal(cache.arrival_order(), torch::tensor({{0, 1, 3, 4, 5, 6, 7, 2}}, torch::kInt64)));
}

TEST(SlotOrderAny, PerHeadEvictionAndKeepAgreeWithTheSets) {
  LayerCache cache = any_order_cache(2, 12);
  cache.evict(torch::tensor({{0, 5, 11}, {3, 4, 10}}, torch::kInt64));
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{1, 2, 3, 4, 6, 7, 8, 9, 10}));
  EXPECT_EQ(kept(cache, 1), (std::set<int64_t>{0, 1, 2, 5, 6, 7, 8, 9, 11}));
  expect_consistent(cache);
  EXPECT_FALSE(cache.homogeneous());
  // keep() of arbitrary (unsorted) slots: the same set survives, whatever the order.
  torch::Tensor pos = cache.positions();
  cache.keep(torch::tensor({{8, 0, 3}, {1, 7, 5}}, torch::kInt64));
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{pos[0][8].item<int64_t>(), pos[0][0].item<int64_t>(), pos[0][3].item<int64_t>()}));
  EXPECT_EQ(kept(cache, 1), (std::set<int64_t>{pos[1][1].item<int64_t>(), pos[1][7].item<int64_t>(), pos[1][5].item<int64_t>()}));
  expect_consistent(cache);
  // Many evictions at once take the one-pass path.
  LayerCache big = any_order_cache(1, 300);
  big.evict(torch::arange(0, 300, 3, torch::kInt64).unsqueeze(0));
  std::set<int64_t> want;
  for (int64_t p = 0; p < 300; ++p)
    if (p % 3) want.insert(p);
  EXPECT_EQ(kept(big, 0), want);
  expect_consistent(big);
}

TEST(SlotOrderAny, HelpersReadAgeFromPositions) {
  LayerCache cache = any_order_cache(1, 8);
  cache.evict(torch::tensor({{1}}, torch::kInt64));  // slot 1 now holds position 7, the newest
  torch::Tensor newest = newest_valid(cache, 2);       // positions 6 and 7
  EXPECT_TRUE(torch::equal(newest[0], torch::tensor({false, true, false, false, false, false, true})));
  torch::Tensor oldest = oldest_valid(cache, 2);  // positions 0 and 2
  EXPECT_TRUE(torch::equal(oldest[0], torch::tensor({true, false, true, false, false, false, false})));
  // Ties go to the older token, not the lower slot: slot 1 (position 7) loses to slot 5 (position 5).
  torch::Tensor scores = torch::tensor({{9.f, 1.f, 0.f, 0.f, 0.f, 1.f, 0.f}});
  keep_best(cache, scores, 2);
  EXPECT_EQ(kept(cache, 0), (std::set<int64_t>{0, 5}));
}

// On a ragged cache whose slots moved, the newest and oldest r valid slots of every head come from
// order statistics of the positions: they equal the r largest / smallest valid positions.
TEST(SlotOrderAny, RaggedNewestAndOldestValidByPosition) {
  LayerCache cache = baseline_test::cache_of(3, 20);
  cache.set_slot_order(SlotOrder::kAny);
  std::mt19937 rng(4);
  int64_t next = 20, checked = 0;
  for (int step = 0; step < 12; ++step) {
    // Every head evicts 0–3 of its valid slots (head 0 none on even steps: the heads stay ragged).
    torch::Tensor valid = cache.valid().defined() ? cache.valid() : torch::ones({3, cache.size()}, torch::kBool);
    torch::Tensor idx = torch::zeros({3, 3}, torch::kInt64), counts = torch::zeros({3}, torch::kInt64);
    for (int64_t h = 0; h < 3; ++h) {
      std::vector<int64_t> live;
      for (int64_t j = 0; j < cache.size(); ++j)
        if (valid[h][j].item<bool>()) live.push_back(j);
      std::shuffle(live.begin(), live.end(), rng);
      const int64_t c = (h == 0 && step % 2 == 0) ? 0 : std::min<int64_t>(rng() % 4, static_cast<int64_t>(live.size()) - 2);
      for (int64_t i = 0; i < c; ++i) idx[h][i] = live[i];
      counts[h] = c;
    }
    cache.evict(idx, counts);
    baseline_test::append_tokens(cache, next++, 1);
    if (cache.all_valid() || cache.in_arrival_order()) continue;
    ++checked;
    for (const int64_t r : {0, 1, 3, 7, 100}) {
      torch::Tensor newest = newest_valid(cache, r), oldest = oldest_valid(cache, r);
      for (int64_t h = 0; h < 3; ++h) {
        std::vector<int64_t> held;
        for (int64_t j = 0; j < cache.size(); ++j)
          if (cache.valid()[h][j].item<bool>()) held.push_back(cache.positions()[h][j].item<int64_t>());
        std::sort(held.begin(), held.end());
        const auto take = static_cast<size_t>(std::min<int64_t>(r, static_cast<int64_t>(held.size())));
        const std::set<int64_t> want_old(held.begin(), held.begin() + take), want_new(held.end() - take, held.end());
        std::set<int64_t> got_old, got_new;
        for (int64_t j = 0; j < cache.size(); ++j) {
          if (oldest[h][j].item<bool>()) got_old.insert(cache.positions()[h][j].item<int64_t>());
          if (newest[h][j].item<bool>()) got_new.insert(cache.positions()[h][j].item<int64_t>());
        }
        ASSERT_EQ(got_old, want_old) << "step " << step << " head " << h << " r " << r;
        ASSERT_EQ(got_new, want_new) << "step " << step << " head " << h << " r " << r;
      }
    }
  }
  EXPECT_GE(checked, 6) << "the cache was rarely ragged with moved slots";
}

// The arrival order that append() and evict() keep up to date (no sort) equals a sort of the
// positions after every step: shared and per-head evictions, in the tail and below it.
TEST(SlotOrderAny, ArrivalOrderKeptUpToDateEqualsASortOfThePositions) {
  LayerCache cache = baseline_test::cache_of(3, 16);
  cache.set_slot_order(SlotOrder::kAny);
  std::mt19937 rng(9);
  int64_t next = 16;
  for (int step = 0; step < 120; ++step) {
    cache.arrival_order();  // the memo the steps below must keep current
    const int64_t n = cache.size(), e = 1 + static_cast<int64_t>(rng() % 3);
    const int64_t rows = step < 40 ? 1 : 3;  // shared evictions first, then per head
    std::vector<int64_t> idx;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int64_t> slots(n);
      std::iota(slots.begin(), slots.end(), int64_t{0});
      std::shuffle(slots.begin(), slots.end(), rng);
      idx.insert(idx.end(), slots.begin(), slots.begin() + e);
    }
    cache.evict(torch::tensor(idx, torch::kInt64).view({rows, e}));
    auto sorted = [&] {
      torch::Tensor pos = cache.homogeneous() ? cache.positions().narrow(0, 0, 1) : cache.positions();
      return std::get<1>(pos.sort(/*stable=*/true, 1, false));
    };
    ASSERT_TRUE(torch::equal(cache.arrival_order(), sorted())) << "after evicting, step " << step;
    baseline_test::append_tokens(cache, next, e + step % 2);  // the cache grows slowly
    next += e + step % 2;
    ASSERT_TRUE(torch::equal(cache.arrival_order(), sorted())) << "after appending, step " << step;
  }
}

// The host mirror of the arrival order follows the cache through appends of any size and
// evictions of any rank, skip (sinks) included: it equals arrival_order() after every step.
TEST(SlotOrderAny, SlotAgesMirrorsTheArrivalOrderWithoutReadingPositions) {
  LayerCache cache = baseline_test::cache_of(2, 12);
  cache.set_slot_order(SlotOrder::kAny);
  SlotAges ages;
  std::mt19937 rng(3);
  int64_t next = 12;
  for (int step = 0; step < 200; ++step) {
    const int64_t skip = step % 3, count = 1 + static_cast<int64_t>(rng() % 4);
    ages.evict(cache, skip, std::min(count, cache.size() - skip - 1));
    torch::Tensor order = cache.arrival_order()[0].contiguous();
    ASSERT_EQ(std::vector<int64_t>(ages.slots().begin(), ages.slots().end()),
              std::vector<int64_t>(order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + order.numel()))
        << "step " << step;
    const int64_t appended = 1 + static_cast<int64_t>(rng() % 5);
    baseline_test::append_tokens(cache, next, appended);
    next += appended;
  }
  EXPECT_FALSE(cache.in_arrival_order());
}

// Ragged eviction (Ada-KV's, a different count per head) on a kAny cache keeps, per head, the same
// tokens as on an arrival-ordered one, shrinks to the same longest head, keeps keys with their
// positions, and keeps the remembered arrival order equal to a sort of the positions.
TEST(SlotOrderAny, RaggedEvictionKeepsWhatArrivalOrderKeeps) {
  const int64_t heads = 3;
  LayerCache ordered = any_order_cache(heads, 24), any = any_order_cache(heads, 24);
  ordered.set_slot_order(SlotOrder::kArrival);
  std::mt19937 rng(5);
  int64_t next = 24;
  // Slots of head h holding `positions` (valid ones only).
  auto slots_of = [](const LayerCache& c, int64_t h, const std::vector<int64_t>& positions) {
    std::vector<int64_t> out;
    torch::Tensor pos = c.positions()[h], valid = c.valid();
    for (int64_t p : positions)
      for (int64_t j = 0; j < c.size(); ++j)
        if (pos[j].item<int64_t>() == p && (!valid.defined() || valid[h][j].item<bool>())) out.push_back(j);
    return out;
  };
  bool moved_ragged = false;
  for (int step = 0; step < 60; ++step) {
    any.arrival_order();  // the memo the eviction must keep current
    std::vector<int64_t> counts(heads);
    std::vector<std::vector<int64_t>> doomed(heads);
    int64_t widest = 1;
    for (int64_t h = 0; h < heads; ++h) {
      const std::set<int64_t> held = kept(ordered, h);
      std::vector<int64_t> live(held.begin(), held.end());
      std::shuffle(live.begin(), live.end(), rng);
      // Head 0 evicts nothing every fifth step (its capacity grew); the others 0–3 tokens.
      counts[h] = (h == 0 && step % 5 == 0) ? 0 : std::min<int64_t>(rng() % 4, static_cast<int64_t>(live.size()) - 1);
      doomed[h].assign(live.begin(), live.begin() + counts[h]);
      widest = std::max(widest, counts[h]);
    }
    auto idx_for = [&](const LayerCache& c) {
      torch::Tensor idx = torch::zeros({heads, widest + 2}, torch::kInt64);  // padding past the counts is ignored
      for (int64_t h = 0; h < heads; ++h) {
        std::vector<int64_t> slots = slots_of(c, h, doomed[h]);
        for (size_t i = 0; i < slots.size(); ++i) idx[h][static_cast<int64_t>(i)] = slots[i];
      }
      return idx;
    };
    torch::Tensor c = torch::tensor(counts, torch::kInt64);
    ordered.evict(idx_for(ordered), c);
    any.evict(idx_for(any), c);
    ASSERT_EQ(ordered.size(), any.size()) << "step " << step;
    for (int64_t h = 0; h < heads; ++h) ASSERT_EQ(kept(ordered, h), kept(any, h)) << "step " << step << " head " << h;
    torch::Tensor valid = any.valid();
    torch::Tensor pos = any.positions().to(torch::kFloat32), id = torch::arange(heads).reshape({-1, 1}).to(torch::kFloat32) * 100;
    torch::Tensor ok = any.keys().select(2, 0).eq(id + pos);
    ASSERT_TRUE((valid.defined() ? ok.logical_or(valid.logical_not()) : ok).all().item<bool>()) << "step " << step;
    ASSERT_TRUE(torch::equal(any.arrival_order(), std::get<1>(any.positions().sort(/*stable=*/true, 1, false)))) << "step " << step;
    moved_ragged = moved_ragged || !any.all_valid();
    for (LayerCache* cache : {&ordered, &any}) {
      torch::Tensor t = torch::arange(next, next + 1).to(torch::kFloat32);
      torch::Tensor k = torch::stack({(torch::arange(heads).reshape({-1, 1}) * 100 + t).to(torch::kFloat32),
                                      -(torch::arange(heads).reshape({-1, 1}) * 100 + t).to(torch::kFloat32)}, -1);
      cache->append(k, k * 2, torch::tensor({next}, torch::kInt64));
    }
    ++next;
  }
  EXPECT_TRUE(moved_ragged);
  EXPECT_FALSE(any.in_arrival_order());
}

// Each order-free policy, stepped on an arrival-ordered cache and on a kAny one with the same
// statistics, keeps the same tokens at every step.
// `rows`: window rows per statistic (K-VEC reads several).
void run_both_orders(const std::string& name, const nlohmann::json& params, int64_t heads, int64_t kv_heads, int64_t rows = 1) {
  auto a = make_policy(name, params), b = make_policy(name, params);
  ASSERT_TRUE(a->slot_order_free()) << name;
  const int64_t budget = 9;
  SequenceInfo info = baseline_test::info_for(1, heads, kv_heads, budget, 20, 7);
  a->begin(info);
  b->begin(info);
  LayerCache ordered = baseline_test::cache_of(kv_heads, 20), any = baseline_test::cache_of(kv_heads, 20);
  any.set_slot_order(SlotOrder::kAny);
  torch::Generator gen = at::detail::createCPUGenerator(11);
  int64_t next = 20;
  for (int step = 0; step < 30; ++step) {
    // Statistics in each cache's own slot order: the same values for the same positions.
    const int64_t n = ordered.size();
    torch::Tensor by_position = torch::softmax(torch::randn({heads, rows, next}, gen), -1);
    auto stats_for = [&](const LayerCache& c) {
      AttentionStats s;
      torch::Tensor pos = c.positions()[0];
      torch::Tensor window = by_position.index_select(2, pos);
      if (c.kv_heads() != 1 && !c.homogeneous()) {  // per-head slots: gather each query head's own row
        torch::Tensor per_kv = c.positions().repeat_interleave(heads / c.kv_heads(), 0);
        window = by_position.gather(2, per_kv.unsqueeze(1).expand({heads, rows, per_kv.size(1)}));
      }
      torch::Tensor row = window.select(1, rows - 1);
      s.last_row = row;
      s.column_sums = window.sum(1);
      s.window_rows = window;
      s.column_counts = torch::ones({n});
      s.n_queries = 1;
      return s;
    };
    const Phase phase = step == 0 ? Phase::kPrefill : Phase::kDecode;
    a->observe(0, ordered, stats_for(ordered), phase);
    b->observe(0, any, stats_for(any), phase);
    a->compress(0, ordered, phase);
    b->compress(0, any, phase);
    ASSERT_EQ(ordered.kv_heads(), any.kv_heads()) << name;  // SnapKV's repeat makes them the query heads
    for (int64_t h = 0; h < ordered.kv_heads(); ++h) ASSERT_EQ(kept(ordered, h), kept(any, h)) << name << " " << params.dump() << " step " << step << " head " << h;
    baseline_test::append_tokens(ordered, next, 1);
    baseline_test::append_tokens(any, next, 1);
    ++next;
  }
  EXPECT_FALSE(any.in_arrival_order()) << name << ": the kAny cache never moved a slot";
}

TEST(SlotOrderAny, OrderFreePoliciesKeepWhatTheyKeepInArrivalOrder) {
  run_both_orders("local", nlohmann::json::object(), 4, 2);
  run_both_orders("streaming_llm", nlohmann::json::object(), 4, 2);
  run_both_orders("streaming_llm", {{"sinks", 2}}, 4, 2);
  run_both_orders("h2o", {}, 4, 2);
  run_both_orders("h2o", {{"head_reduce", "max"}}, 4, 2);
  run_both_orders("tova", nlohmann::json::object(), 4, 2);
  run_both_orders("random", nlohmann::json::object(), 4, 2);
  run_both_orders("random", {{"per_head", true}}, 4, 2);
  run_both_orders("scissorhands", {{"history_window", 1}}, 4, 2);
  run_both_orders("scissorhands", {{"history_window", 3}, {"head_reduce", "max"}}, 4, 2);
  // Pooling reads the neighbours in arrival order, wherever their slots are.
  run_both_orders("snapkv", {{"window", 2}, {"kernel", 3}}, 4, 2);
  run_both_orders("snapkv", {{"window", 2}, {"kernel", 5}, {"pooling", "avg"}, {"gqa", "reduce"}}, 4, 2);
  run_both_orders("pyramidkv", {{"window", 2}, {"kernel", 3}}, 4, 2);
  run_both_orders("cascade", {{"sinks", 2}, {"cascades", 3}}, 4, 2);
  run_both_orders("cascade", {{"sinks", 1}, {"token_selection", false}}, 4, 2);
  // Ragged heads: each evicts its own number of tokens.
  run_both_orders("adakv", {{"window", 2}, {"kernel", 3}}, 4, 2);
  run_both_orders("adakv", {{"window", 2}, {"kernel", 3}, {"gqa", "reduce"}, {"reference_rounding", false}}, 4, 2);
  run_both_orders("adakv", {{"scorer", "h2o"}, {"recent_ratio", 0.25}, {"normalize", true}}, 4, 2);
  run_both_orders("adakv", {{"scorer", "tova"}}, 4, 2);
  // K-VEC: pooling, the window and the cross-head max read tokens in arrival order.
  run_both_orders("kvec", {{"window", 2}, {"wide_window", 3}, {"delta", 1}, {"kernel", 3}, {"beta", 0.3}}, 4, 2, 3);
  run_both_orders("kvec", {{"window", 2}, {"wide_window", 3}, {"delta", 2}, {"kernel", 3}, {"gqa", "reduce"}}, 4, 2, 3);
  run_both_orders("kvec", {{"window", 3}, {"wide_window", 3}, {"head_criterion", "entropy"}, {"force_literal_one", true}}, 4, 2, 3);
  // BumbleBee: the window and the tie rules read arrival order; its similarities follow token ids.
  run_both_orders("bumblebee", nlohmann::json::object(), 4, 2);
  run_both_orders("bumblebee", {{"mode", "online"}, {"local_ratio", 0.3}}, 4, 2);
  run_both_orders("bumblebee", {{"mode", "offline"}}, 4, 2);
}

TEST(SlotOrderAny, OrderDependentPoliciesDoNotOptIn) {
  for (const char* name : {"buzz"})
    EXPECT_FALSE(make_policy(name)->slot_order_free()) << name;
}

}  // namespace
}  // namespace kvbench::policies
