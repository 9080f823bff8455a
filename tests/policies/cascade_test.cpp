// Cascading KV cache: eq. 4's reach on a synthetic stream (|C| = 2048, N = 4: ≈ 7,680 tokens),
// Alg. 1's four cases (Fig. 4), the reference's eager fill and ties, the ablations, the policy end
// to end against an independent simulation of its EMA (γ = exp(−N·ln 100/|C|)), with the same
// tokens on every head, and the cache size of a stream on the real model. Parity with the
// official code: cascade_parity_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "policies/cascade_book.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

std::vector<int64_t> positions_of(cascade::Book& book) {
  std::vector<int64_t> out;
  for (const cascade::Token* t : book.in_order()) out.push_back(t->position);
  return out;
}

std::vector<int64_t> positions_of(const std::deque<cascade::Token>& buf) {
  std::vector<int64_t> out;
  for (const auto& t : buf) out.push_back(t.position);
  return out;
}

TEST(Cascade, ReachMatchesEquationFour) {
  const std::vector<int64_t> caps = cascade::split_capacity(2048, 4);
  EXPECT_EQ(cascade::approximate_context_length(caps, 2), 7680);
  // The static pattern (no token selection), so that only the schedule decides.
  cascade::Book book(4, caps, 2, /*token_selection=*/false);
  const int64_t stream = 20000;
  for (int64_t p = 0; p < stream; ++p) book.insert({p, 0.0});
  ASSERT_EQ(book.size(), 4 + 2048);
  EXPECT_EQ(positions_of(book.sinks()), (std::vector<int64_t>{0, 1, 2, 3}));
  const int64_t oldest = book.cascade(3).front().position;
  const int64_t reach = stream - 1 - oldest;
  EXPECT_NEAR(static_cast<double>(reach), 7680.0, 8.0) << "oldest non-sink token " << oldest;
  // Sub-cache i holds every 2^i-th token: the gaps are exactly 1, 2, 4, 8.
  for (size_t i = 0; i < 4; ++i) {
    const auto& buf = book.cascade(i);
    ASSERT_EQ(buf.size(), 512u);
    for (size_t j = 1; j < buf.size(); ++j) ASSERT_EQ(buf[j].position - buf[j - 1].position, int64_t{1} << i);
  }
  // N = 1 is the sink cache: reach |C|.
  cascade::Book sink(4, {2048}, 2, false);
  for (int64_t p = 0; p < stream; ++p) sink.insert({p, 0.0});
  EXPECT_EQ(stream - 1 - sink.cascade(0).front().position, 2047);
  // pow3 reaches |C|/N·(1 + 3 + 9 + 27).
  cascade::Book pow3(4, caps, 3, false);
  for (int64_t p = 0; p < 40000; ++p) pow3.insert({p, 0.0});
  EXPECT_NEAR(static_cast<double>(40000 - 1 - pow3.cascade(3).front().position), 512.0 * 40, 27.0);
}

// Fig. 4 / Alg. 1 on one sink and two sub-caches of two tokens.
TEST(Cascade, AlgorithmOneFourCases) {
  std::map<int64_t, double> score = {{1, 0.5}, {2, 0.9}, {3, 0.1}, {4, 0.05}, {5, 0.3}, {6, 0.2}, {7, 0.2}};
  cascade::Book book(1, {2, 2}, 2, true);
  auto insert = [&](int64_t p) { book.insert({p, score.count(p) ? score[p] : 0.0}); };
  insert(0);
  EXPECT_EQ(positions_of(book.sinks()), std::vector<int64_t>{0});
  insert(1);  // case 1: accepting, not full
  insert(2);
  EXPECT_EQ(positions_of(book.cascade(0)), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(book.accepting(1));
  insert(3);  // case 2: full, so the oldest (1) cascades into the accepting second sub-cache
  EXPECT_EQ(positions_of(book.cascade(0)), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(positions_of(book.cascade(1)), std::vector<int64_t>{1});
  EXPECT_FALSE(book.accepting(1));
  insert(4);  // case 3: not accepting; evicted 2 (0.9) beats the newest 1 (0.5) and replaces it
  EXPECT_EQ(positions_of(book.cascade(1)), std::vector<int64_t>{2});
  insert(5);  // accepting again: 3 is added
  EXPECT_EQ(positions_of(book.cascade(1)), (std::vector<int64_t>{2, 3}));
  insert(6);  // case 4: not accepting; evicted 4 (0.05) loses to the newest 3 (0.1) and is dropped
  EXPECT_EQ(positions_of(book.cascade(1)), (std::vector<int64_t>{2, 3}));
  insert(7);  // accepting and full: 5 enters, the oldest (2) leaves the last sub-cache for good
  EXPECT_EQ(positions_of(book), (std::vector<int64_t>{0, 3, 5, 6, 7}));
}

TEST(Cascade, EagerAddToAnEmptySubCacheAndTheNoSelectionAblation) {
  cascade::Book eager(0, {1, 1}, 2, true);
  eager.insert({0, 0.0});
  eager.insert({1, 0.0});  // the second sub-cache is not accepting but empty: 0 goes there
  EXPECT_EQ(positions_of(eager), (std::vector<int64_t>{0, 1}));
  // Without token selection the pattern is fixed: a better token evicted into a sub-cache that
  // is not accepting is dropped instead of replacing the newest one.
  for (bool selection : {true, false}) {
    cascade::Book book(0, {1, 1}, 2, selection);
    for (int64_t p = 0; p < 4; ++p) book.insert({p, 0.0});
    book.insert({4, 1.0});  // t = 4, accepting: 3 moves on to the second sub-cache, the other falls off
    EXPECT_EQ(positions_of(book), (std::vector<int64_t>{3, 4}));
    book.insert({5, 0.0});  // t = 5, not accepting: evicted 4 (1.0) vs newest 3 (0.0)
    EXPECT_EQ(positions_of(book), (std::vector<int64_t>{selection ? 4 : 3, 5})) << "selection " << selection;
  }
  auto ablated = make_policy("cascade", {{"token_selection", false}});
  EXPECT_FALSE(ablated->wants().any());
}

TEST(Cascade, EagerFillHoldsEveryTokenUntilTheCascadeIsFullAndTiesGoToTheIncomingToken) {
  // One sink, two sub-caches of two. Eager (the reference): non-sink steps t <= |C| = 4 are
  // accepted everywhere, a FIFO of 4; without it the second sub-cache takes every other token
  // from the start and the cascade holds fewer.
  cascade::Book eager(1, {2, 2}, 2, true, /*eager_fill=*/true), thin(1, {2, 2}, 2, true);
  const std::map<int64_t, double> score = {{1, 0.9}, {2, 0.1}, {3, 0.5}, {4, 0.2}, {5, 0.3}, {6, 0.4}};
  for (int64_t p = 0; p <= 4; ++p) {
    eager.insert({p, p ? score.at(p) : 0.0});
    thin.insert({p, p ? score.at(p) : 0.0});
  }
  EXPECT_EQ(positions_of(eager), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(thin.size(), 4);
  eager.insert({5, score.at(5)});  // t = 4 = |C|: still eager, 1 falls off the end
  EXPECT_EQ(positions_of(eager), (std::vector<int64_t>{0, 2, 3, 4, 5}));
  eager.insert({6, score.at(6)});  // t = 5: second sub-cache not accepting: evicted 4 (0.2) < newest 3 (0.5)
  EXPECT_EQ(positions_of(eager), (std::vector<int64_t>{0, 2, 3, 5, 6}));
  // A tie replaces the newest token (the reference's score >= old_score).
  cascade::Book tie(0, {1, 1}, 2, true);
  for (int64_t p = 0; p < 3; ++p) tie.insert({p, 0.5});  // t = 2: 0 leaves; second holds 1
  tie.insert({3, 0.5});                                   // t = 3, not accepting: 2 ties with 1 and replaces it
  EXPECT_EQ(positions_of(tie), (std::vector<int64_t>{2, 3}));
}

TEST(Cascade, SinksComeOnTopOfTheWindowUnlessToldOtherwise) {
  SequenceInfo info;
  info.n_layers = 1; info.n_heads = 1; info.n_kv_heads = 1; info.head_dim = 2; info.budget = 64;
  auto on_top = make_policy("cascade");
  on_top->begin(info);
  EXPECT_EQ(on_top->layer_budget(0), 68);
  EXPECT_EQ(on_top->position_mode(), PositionMode::kCacheSlot);
  auto inside = make_policy("cascade", {{"sinks_on_top", false}});
  inside->begin(info);
  EXPECT_EQ(inside->layer_budget(0), 64);
}

// The policy on a LayerCache with two KV heads of four query heads, fed random attention: the
// kept tokens equal an independent simulation of Alg. 1 with the paper's EMA and ρ = mean.
TEST(Cascade, PolicyMatchesAnIndependentSimulation) {
  const int64_t budget = 12, sinks = 4, n_cascades = 3;
  SequenceInfo info;
  info.n_layers = 1; info.n_heads = 4; info.n_kv_heads = 2; info.head_dim = 2; info.budget = budget;
  auto policy = make_policy("cascade", {{"cascades", n_cascades}, {"gamma_from_window", true}});
  policy->begin(info);
  const double gamma = std::exp(-n_cascades * std::log(100.0) / budget);
  cascade::Book reference(sinks, cascade::split_capacity(budget, n_cascades), 2, true, /*eager_fill=*/true);
  std::map<int64_t, double> ema;  // position -> μ
  LayerCache cache(2, 2, torch::kFloat32);
  std::mt19937_64 rng(5);
  for (int64_t p = 0; p < 120; ++p) {
    torch::Tensor k = torch::randn({2, 1, 2});
    cache.append(k, k.clone(), torch::tensor({p}, torch::kInt64));
    const int64_t n = cache.size();
    torch::Tensor row = torch::softmax(torch::randn({4, n}) * 2.0, 1);
    AttentionStats stats;
    stats.column_sums = row;
    stats.column_counts = torch::ones({n});
    stats.n_queries = 1;
    policy->observe(0, cache, stats, Phase::kDecode);
    // Reference EMA over the tokens the cache holds, ρ = mean over all query heads.
    torch::Tensor mean = row.to(torch::kFloat64).mean(0);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t pos = cache.positions()[0][j].item<int64_t>();
      ema[pos] = gamma * ema[pos] + (1 - gamma) * mean[j].item<double>();
    }
    policy->compress(0, cache, Phase::kDecode);
    for (cascade::Token* t : reference.in_order()) t->score = ema[t->position];
    reference.insert({p, ema[p]});
    ASSERT_LE(cache.size(), budget + sinks);
    std::vector<int64_t> got;
    for (int64_t j = 0; j < cache.size(); ++j) {
      got.push_back(cache.positions()[0][j].item<int64_t>());
      ASSERT_EQ(cache.positions()[1][j].item<int64_t>(), got.back()) << "heads disagree";
    }
    ASSERT_EQ(got, positions_of(reference)) << "at token " << p;
  }
}

// The policy runs Alg. 1 over token ids and decides cases 3–4 with tensor ops on the cache's
// device (it never reads scores back): it keeps what the book keeps when driven on the host with
// the cache's own EMA. Blocks of 1–3 queries with random attention, or none at all (every contest
// a tie), both slot orders, with and without token selection and eager fill.
void expect_policy_keeps_what_the_book_keeps(bool attended, bool any_order, bool selection, bool eager) {
  const int64_t budget = 10, sinks = 2;
  SequenceInfo info;
  info.n_layers = 1; info.n_heads = 4; info.n_kv_heads = 2; info.head_dim = 2; info.budget = budget;
  auto policy = make_policy("cascade", {{"cascades", 3}, {"token_selection", selection}, {"eager_fill", eager}, {"sinks", sinks}});
  policy->begin(info);
  cascade::Book reference(sinks, cascade::split_capacity(budget, 3), 2, selection, eager);
  LayerCache cache(2, 2, torch::kFloat32);
  if (any_order) cache.set_slot_order(SlotOrder::kAny);
  const std::string where = std::string(any_order ? "kAny" : "kArrival") + " selection " + std::to_string(selection) +
                            " eager " + std::to_string(eager) + " attended " + std::to_string(attended);
  torch::manual_seed(3);
  for (int64_t p = 0, step = 0; p < 150; ++step) {
    const int64_t T = 1 + step % 3;
    torch::Tensor k = torch::randn({2, T, 2});
    cache.append(k, k.clone(), torch::arange(p, p + T, torch::kInt64));
    // Few distinct attention values, so that near and exact ties are common.
    AttentionStats stats;
    stats.column_sums = torch::randint(0, 3, {4, cache.size()}).to(torch::kFloat32) * (attended ? 1.0f : 0.0f);
    stats.column_counts = torch::full({cache.size()}, static_cast<float>(T));
    stats.n_queries = T;
    policy->observe(0, cache, stats, Phase::kDecode);
    std::map<int64_t, double> ema;  // position -> the cache's μ
    if (selection) {
      torch::Tensor mu = cache.state("ema", {}, torch::kFloat64);
      for (int64_t j = 0; j < cache.size(); ++j) ema[cache.positions()[0][j].item<int64_t>()] = mu[0][j].item<double>();
    }
    policy->compress(0, cache, Phase::kDecode);
    for (cascade::Token* t : reference.in_order()) t->score = ema[t->position];
    for (int64_t q = p; q < p + T; ++q) reference.insert({q, ema[q]});
    p += T;
    std::vector<int64_t> kept;
    for (int64_t j = 0; j < cache.size(); ++j) {
      kept.push_back(cache.positions()[0][j].item<int64_t>());
      ASSERT_EQ(cache.positions()[1][j].item<int64_t>(), kept.back()) << "heads disagree, " << where;
    }
    if (any_order) std::sort(kept.begin(), kept.end());  // kArrival: slots stay in position order
    ASSERT_EQ(kept, positions_of(reference)) << "step " << step << ", " << where;
  }
}

TEST(Cascade, DecidesOnTheDeviceWhatTheBookDecides) {
  for (int variant = 0; variant < 16; ++variant)
    expect_policy_keeps_what_the_book_keeps(variant & 1, variant & 2, variant & 4, variant & 8);
}

}  // namespace
}  // namespace kvbench::policies

#include "budget_probe.hpp"

namespace kvbench::policies {
namespace {

TEST(Cascade, AblationsKeepTheBudgetOnTheRealModel) {
  const std::vector<nlohmann::json> configs = {
      {{"cascade_function", "pow3"}}, {{"cascade_function", "pow4"}}, {{"sinks_on_top", false}},
      {{"token_selection", false}}, {{"head_reduce", "median"}}, {{"head_reduce", "max"}},
      {{"cascades", 1}}, {{"cascades", 8}}, {{"gamma", 0.5}}, {{"gamma_from_window", true}},
      {{"eager_fill", false}}};
  uint64_t seed = 21;
  for (const auto& params : configs) EXPECT_EQ(testing::first_budget_violation("cascade", params, seed++), "");
}

}  // namespace
}  // namespace kvbench::policies

#include "datasets/text_reader.hpp"
#include "models/perplexity.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::policies {
namespace {

// Records how many tokens layer 0 holds after every compression.
class HeldRecorder : public testing::CheckedPolicy {
 public:
  using CheckedPolicy::CheckedPolicy;
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    CheckedPolicy::compress(layer, cache, phase);
    if (layer == 0) held.push_back(cache.max_head_length());
  }
  std::vector<int64_t> held;
};

// `kvbench perplexity --stream --policy cascade --budget 256` on stories260K: token by token, the
// reference's eager fill holds every token until 256 have streamed (4 sinks + 252), and never more
// than budget + sinks = 260. Without it the cascade thins from the start (147 after 256 tokens).
TEST(Cascade, StreamedPerplexityUsesItsWholeBudget) {
  const models::LoadedModel loaded = models::load_model("stories260K");
  const models::Transformer model(loaded.config, loaded.weights);
  models::Tokenizer tokenizer(loaded.tokenizer_path);
  std::string text;
  for (const auto& s : datasets::read_tinystories(std::string(KVBENCH_SHARED_DIR) + "/data/tinystories/TinyStories-valid.head.txt"))
    text += s + "\n";
  std::vector<int> ids = tokenizer.encode(text, /*add_bos=*/true);
  const std::vector<int64_t> tokens(ids.begin(), ids.begin() + 600);
  for (bool eager : {true, false}) {
    HeldRecorder policy(make_policy("cascade", {{"eager_fill", eager}}));
    models::SessionOptions options;
    options.protocol = models::Protocol::kStream;
    options.block = 1;
    options.budget = Budget::tokens(256);
    models::InferenceSession session(model, &policy, options);
    const models::PerplexityResult result = models::evaluate_perplexity(session, tokens);
    ASSERT_GE(policy.held.size(), 599u);
    SCOPED_TRACE(eager ? "eager fill" : "no eager fill");
    EXPECT_TRUE(policy.violations.empty()) << policy.violations.front();
    EXPECT_LE(result.max_cache_len, 260);
    if (eager) {
      EXPECT_EQ(policy.held[255], 256);  // after 256 tokens: all of them
      EXPECT_EQ(policy.held[259], 260);
      for (size_t i = 259; i < policy.held.size(); ++i) ASSERT_EQ(policy.held[i], 260) << "after " << i + 1;
    } else {
      EXPECT_LT(policy.held[255], 200);
      EXPECT_LT(policy.held[510], 240);
    }
  }
}

}  // namespace
}  // namespace kvbench::policies
