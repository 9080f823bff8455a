// Row statistics (the last query's row, an observation window) of a long forward come from a
// second pass over the last queries, while the output is computed without probabilities: both
// must equal what one pass over every query gives (asking for column sums as well forces that
// pass), chunked or not, on a full and on a ragged cache.
#include <gtest/gtest.h>

#include "models/attention.hpp"

namespace kvbench::models {
namespace {

using policies::LayerCache;

constexpr int64_t kHeads = 4, kKvHeads = 2, kHeadDim = 8;

ModelConfig config() {
  ModelConfig c;
  c.dim = kHeads * kHeadDim;
  c.n_heads = kHeads;
  c.n_kv_heads = kKvHeads;
  c.head_dim = kHeadDim;
  c.max_seq_len = 256;
  return c;
}

// 12 older tokens, then a forward of T = 9 whose keys are the cache's last slots.
LayerCache filled_cache(bool ragged) {
  torch::manual_seed(3);
  LayerCache cache(kKvHeads, kHeadDim, torch::kFloat32);
  cache.append(torch::randn({kKvHeads, 12, kHeadDim}), torch::randn({kKvHeads, 12, kHeadDim}), torch::arange(12));
  if (ragged) cache.keep(torch::tensor({{0, 2, 3, 5, 7, 8, 9, 11}, {1, 2, 4, 6, 7, 9, 10, 11}}), torch::tensor({8, 6}));
  cache.append(torch::randn({kKvHeads, 9, kHeadDim}), torch::randn({kKvHeads, 9, kHeadDim}), torch::arange(12, 21));
  return cache;
}

void expect_same(const torch::Tensor& a, const torch::Tensor& b, const char* what) {
  ASSERT_TRUE(a.defined() && b.defined()) << what;
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  EXPECT_LE((a - b).abs().max().item<double>(), 1e-6) << what;
}

TEST(Attention, RowStatisticsApartEqualOnePassOverEveryQuery) {
  const Rope rope(config());
  for (bool ragged : {false, true}) {
    for (int64_t max_elements : {int64_t{1} << 24, int64_t{50}}) {  // one chunk; chunks of 2 queries
      SCOPED_TRACE(std::string(ragged ? "ragged" : "full") + ", max_score_elements " + std::to_string(max_elements));
      LayerCache cache = filled_cache(ragged);
      torch::manual_seed(4);
      const torch::Tensor q = torch::randn({kHeads, 9, kHeadDim});
      AttentionRequest rows_only, every_query;
      rows_only.max_score_elements = every_query.max_score_elements = max_elements;
      rows_only.stats.window = 4;
      rows_only.stats.last_row = true;
      every_query.stats = rows_only.stats;
      every_query.stats.column_sums = true;
      const AttentionResult a = attend(q, cache, rope, rows_only), b = attend(q, cache, rope, every_query);
      expect_same(a.output, b.output, "output");
      expect_same(a.stats.window_rows, b.stats.window_rows, "window rows");
      expect_same(a.stats.last_row, b.stats.last_row, "last row");
      expect_same(a.stats.column_counts, b.stats.column_counts, "column counts");
      EXPECT_EQ(a.stats.window_rows.size(1), 4);
      EXPECT_EQ(a.stats.n_queries, 9);
      // The window's last row is the last query's row, and each row is a distribution over what it may see.
      expect_same(a.stats.window_rows.select(1, 3), a.stats.last_row, "window's last row");
      expect_same(a.stats.window_rows.sum(-1), torch::ones({kHeads, 4}), "row sums");
    }
  }
}

// column_max (kvpress's KVCompose) is, per head and token, the largest of every query's row, however
// the queries are chunked.
TEST(Attention, ColumnMaxIsTheLargestOfEveryQuerysRow) {
  const Rope rope(config());
  for (bool ragged : {false, true}) {
    for (int64_t max_elements : {int64_t{1} << 24, int64_t{50}}) {
      LayerCache cache = filled_cache(ragged);
      torch::manual_seed(6);
      const torch::Tensor q = torch::randn({kHeads, 9, kHeadDim});
      AttentionRequest request;
      request.max_score_elements = max_elements;
      request.stats.window = 9;
      request.stats.column_max = true;
      const AttentionResult r = attend(q, cache, rope, request);
      expect_same(r.stats.column_max, std::get<0>(r.stats.window_rows.max(1)), "column max");
    }
  }
}

// The fused kernel (libtorch >= 2; the same chunked path on 1.13) and the chunked matmul-softmax
// give the same output, for a block of queries and for one decoding query.
TEST(Attention, FusedAndChunkedGiveTheSameOutput) {
  const Rope rope(config());
  LayerCache cache = filled_cache(false);
  torch::manual_seed(5);
  for (int64_t T : {int64_t{9}, int64_t{1}}) {
    const torch::Tensor q = torch::randn({kHeads, T, kHeadDim});
    AttentionRequest fused, chunked;
    chunked.path = AttentionPath::kChunked;
    expect_same(attend(q, cache, rope, fused).output, attend(q, cache, rope, chunked).output, "output");
  }
}

// A shared prefill computes each policy's statistics apart from the forward's attention
// (models/prefill_share.hpp): bit for bit what attend() gives that request, whether attend() took
// them from the output's own pass (column statistics) or from a pass over the last rows.
TEST(Attention, StatisticsApartAreBitForBitAttendsOwn) {
  const Rope rope(config());
  policies::StatsRequest rows, columns, kv, everything, queries;
  rows.window = 4;
  rows.last_row = true;
  columns.column_sums = columns.column_sq_sums = columns.column_max = true;
  kv.kv_column_sq_sums = kv.kv_column_above_mean = true;
  everything = rows;
  everything.merge(columns).merge(kv);
  queries.queries = true;
  for (bool ragged : {false, true})
    for (int64_t max_elements : {int64_t{1} << 24, int64_t{50}})
      for (const policies::StatsRequest& want : {rows, columns, kv, everything, queries}) {
        LayerCache cache = filled_cache(ragged);
        torch::manual_seed(4);
        const torch::Tensor q = torch::randn({kHeads, 9, kHeadDim});
        AttentionRequest request;
        request.stats = want;
        request.max_score_elements = max_elements;
        const policies::AttentionStats a = attend(q, cache, rope, request).stats;
        const policies::AttentionStats b = attention_statistics(q, cache, want, max_elements);
        for (auto field : {&policies::AttentionStats::last_row, &policies::AttentionStats::column_sums,
                           &policies::AttentionStats::column_sq_sums, &policies::AttentionStats::column_max,
                           &policies::AttentionStats::window_rows,
                           &policies::AttentionStats::kv_column_sq_sums, &policies::AttentionStats::kv_column_above_mean,
                           &policies::AttentionStats::column_counts, &policies::AttentionStats::queries}) {
          ASSERT_EQ((a.*field).defined(), (b.*field).defined());
          if ((a.*field).defined()) EXPECT_TRUE(torch::equal(a.*field, b.*field));
        }
        EXPECT_EQ(a.n_queries, b.n_queries);
      }
}

}  // namespace
}  // namespace kvbench::models
