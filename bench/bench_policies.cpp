// Per-step policy cost (observe + compress) against cache size, for every baseline policy, on
// synthetic caches and attention statistics of one Llama-3-8B-shaped layer (32 query heads, 8 KV
// heads, head_dim 128, float32, CPU). Each iteration is one steady-state decode step: the cache
// holds n tokens (budget n), one token is appended, the policy observes that step's statistics
// (T = 1 query) and compresses back to n. `full` (no eviction work, the cache just grows) is the
// cost of the append alone. Order-free policies run on a SlotOrder::kAny cache, as in a session.
// LayerDecodeStep is the yardstick: one decode step of that layer's attention + MLP (random
// float32 weights, the cache holding n tokens), which the target compares against
// (policy step at 4K ≤ 10% of it; streaming policies flat within 2× from 1K to 64K).
// Run: build/bench/bench_policies [--benchmark_filter=snapkv]
// KVBENCH_TRACE=trace.json writes a Chrome trace of every operator of the PolicyStep benchmarks
// run (each step is a "policy_step" event); scripts/trace_ops.py sums it per operator and step.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/record_function.h>
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

#include "every_policy.hpp"
#include "models/op_trace.hpp"
#include "models/rope.hpp"
#include "models/transformer.hpp"
#include "policies/budget.hpp"
#include "policies/gqa_mode.hpp"
#include "policies/registry.hpp"

namespace {

using namespace kvbench::policies;

constexpr int64_t kHeads = 32, kKvHeads = 8, kHeadDim = 128, kDim = 4096;

AttentionStats synthetic_stats(const StatsRequest& want, int64_t n, torch::Generator& gen) {
  AttentionStats s;
  // A softmax row with a few heavy tokens, as real attention.
  torch::Tensor row = torch::softmax(torch::randn({kHeads, n}, gen) * 3, -1);
  if (want.last_row) s.last_row = row;
  if (want.column_sums) s.column_sums = row;
  if (want.column_sq_sums) s.column_sq_sums = row.square();
  if (want.window > 0) s.window_rows = row.unsqueeze(1);
  torch::Tensor kv_row = row.reshape({kKvHeads, kHeads / kKvHeads, n}).mean(1);  // group-averaged
  if (want.kv_column_sq_sums) s.kv_column_sq_sums = kv_row.square();
  if (want.kv_column_above_mean) s.kv_column_above_mean = (kv_row > 1.0 / static_cast<double>(n)).to(torch::kFloat32);
  s.column_counts = torch::ones({n});
  s.n_queries = 1;
  s.position_end = n;
  if (want.queries_before_rope) {  // ExpectedAttention: the step's query, rotated by a real RoPE
    static const kvbench::models::Rope rope([] {
      kvbench::models::ModelConfig c;
      c.head_dim = kHeadDim;
      c.n_heads = kHeads;
      c.n_kv_heads = kKvHeads;
      c.rope_theta = 500000.0;
      return c;
    }());
    s.queries_before_rope = torch::randn({kHeads, 1, kHeadDim}, gen);
    s.rotate = [](const torch::Tensor& x, int64_t first) { return rope.apply_heads(x, first); };
  }
  if (want.output_projection) s.output_projection = torch::randn({kHeads * kHeadDim, kHeads * kHeadDim}, gen) * 0.01;
  if (want.hidden_states) s.hidden_states = torch::randn({1, kDim}, gen);  // KVzap: the step's attention input
  return s;
}

int64_t synthetic_size(const AttentionStats& s) { return s.column_counts.size(0); }

// The layer's shape, for the learned presses' synthetic artefacts.
kvbench::models::ModelConfig bench_shape() {
  kvbench::models::ModelConfig shape;
  shape.n_layers = 1;
  shape.n_kv_heads = kKvHeads;
  shape.head_dim = kHeadDim;
  shape.dim = kDim;
  return shape;
}

void PolicyStep(benchmark::State& state, const std::string& name) {
  const int64_t n = state.range(0);
  auto policy = make_policy(name, kvbench::testing::runnable_params(name, bench_shape()));
  SequenceInfo info;
  info.n_layers = 1;
  info.n_heads = kHeads;
  info.n_kv_heads = kKvHeads;
  info.head_dim = kHeadDim;
  info.prompt_len = n;
  // ThinK and DMSPress take no token budget (they prune channels, or by a threshold); LU-KV and
  // CompressionRatioDecodingPress take a compression ratio (0.5 here).
  info.budget = kvbench::testing::policy_refuses(name, kvbench::models::Protocol::kDecode, true) ? kUnlimitedTokens : n;
  if (kvbench::testing::sized_by_ratio(name)) {
    info.compression_ratio = 0.5;
    info.budget = n - n / 2;
  }
  policy->begin(info);
  torch::Generator gen = at::detail::createCPUGenerator(1234);
  LayerCache cache(kKvHeads, kHeadDim, torch::kFloat32, n + 2);
  if (policy->slot_order_free()) cache.set_slot_order(SlotOrder::kAny);
  cache.append(torch::randn({kKvHeads, n, kHeadDim}, gen), torch::randn({kKvHeads, n, kHeadDim}, gen),
               torch::arange(n, torch::kInt64));
  const StatsRequest want = policy->wants();
  // Warm the policy state on the full prompt-sized statistics once (H2O's accumulators etc.).
  policy->observe(0, cache, synthetic_stats(want, n, gen), Phase::kPrefill);
  policy->compress(0, cache, Phase::kPrefill);
  std::vector<AttentionStats> stats;  // precomputed so the timing is the policy's alone
  for (int i = 0; i < 8; ++i) stats.push_back(synthetic_stats(want, n + 1, gen));
  torch::Tensor k = torch::randn({kKvHeads, 1, kHeadDim}, gen);
  int64_t position = n, i = 0;
  const bool grows = name == "full";
  // One decode step; statistics regenerated for a new width (Ada-KV's ragged rows) are not timed.
  auto step = [&](bool timed) {
    append_model_heads(cache, k, k, torch::tensor({position++}, torch::kInt64));
    AttentionStats& now = stats[i++ % stats.size()];
    if (now.n_queries > 0 && synthetic_size(now) != cache.size()) {
      if (timed) state.PauseTiming();
      now = synthetic_stats(want, cache.size(), gen);
      if (timed) state.ResumeTiming();
    }
    now.position_end = position;  // as the runtime reports it
    RECORD_FUNCTION("policy_step", std::vector<c10::IValue>());
    policy->observe(0, cache, now, Phase::kDecode);
    policy->compress(0, cache, Phase::kDecode);
  };
  // One untimed step first, so one-time work (SnapKV's repeat of K/V to the query heads on its
  // first eviction) is not charged to the steady state.
  if (!grows) step(false);
  // Ada-KV's longest head may outgrow n; the cache's buffers then double (amortised: ~30 µs a step
  // at 4K), which ten timed steps would charge in full. The growth is reserved up front instead.
  cache.reserve(2 * n + 64);
  std::unique_ptr<kvbench::models::OpTrace> trace;
  if (const char* path = std::getenv("KVBENCH_TRACE")) trace = std::make_unique<kvbench::models::OpTrace>(path);
  for (auto _ : state) {
    if (grows && cache.size() != n) {  // full: keep the size fixed by dropping the oldest (untimed)
      state.PauseTiming();
      cache.keep(torch::arange(cache.size() - n, cache.size(), torch::kInt64).unsqueeze(0));
      state.ResumeTiming();
    }
    step(true);
  }
  state.counters["cache_len"] = static_cast<double>(cache.max_head_length());
}

// One Llama-3-8B-shaped layer (dim 4096, 32 heads, 8 KV heads, MLP 14336), vocabulary 256 so
// the embedding and head cost nothing: one token's forward over a cache of n tokens.
void LayerDecodeStep(benchmark::State& state) {
  const int64_t n = state.range(0);
  kvbench::models::ModelConfig c;
  c.dim = 4096;
  c.hidden_dim = 14336;
  c.n_layers = 1;
  c.n_heads = kHeads;
  c.n_kv_heads = kKvHeads;
  c.head_dim = kHeadDim;
  c.vocab_size = 256;
  c.max_seq_len = 131072;
  c.rope_theta = 500000;
  c.tied_embeddings = false;
  torch::Generator gen = at::detail::createCPUGenerator(7);
  auto w = [&](int64_t rows, int64_t cols) { return torch::randn({rows, cols}, gen) * 0.02; };
  kvbench::models::ModelWeights weights;
  weights.embedding = w(c.vocab_size, c.dim);
  weights.lm_head = w(c.vocab_size, c.dim);
  weights.final_norm = torch::ones({c.dim});
  kvbench::models::LayerWeights l;
  l.attn_norm = torch::ones({c.dim});
  l.ffn_norm = torch::ones({c.dim});
  l.wq = w(kHeads * kHeadDim, c.dim);
  l.wk = w(kKvHeads * kHeadDim, c.dim);
  l.wv = w(kKvHeads * kHeadDim, c.dim);
  l.wo = w(c.dim, kHeads * kHeadDim);
  l.w_gate = w(c.hidden_dim, c.dim);
  l.w_up = w(c.hidden_dim, c.dim);
  l.w_down = w(c.dim, c.hidden_dim);
  weights.layers.push_back(l);
  kvbench::models::Transformer model(c, weights);
  KVCache cache = model.make_cache(PositionMode::kOriginal);
  cache.layer(0).append(torch::randn({kKvHeads, n, kHeadDim}, gen), torch::randn({kKvHeads, n, kHeadDim}, gen),
                        torch::arange(n, torch::kInt64));
  kvbench::models::CacheControl none;
  int64_t position = n;
  for (auto _ : state) {
    torch::Tensor logits = model.forward({5}, position++, cache, none, false);
    benchmark::DoNotOptimize(logits.data_ptr<float>());
    state.PauseTiming();
    cache.layer(0).keep(torch::arange(1, cache.layer(0).size(), torch::kInt64).unsqueeze(0));  // back to n
    state.ResumeTiming();
  }
}

}  // namespace

BENCHMARK(LayerDecodeStep)->Arg(1024)->Arg(4096)->Arg(16384)->Unit(benchmark::kMicrosecond);

#define KVBENCH_POLICY_BENCH(policy)                                                                        \
  BENCHMARK_CAPTURE(PolicyStep, policy, std::string(#policy))->RangeMultiplier(4)->Range(1024, 65536)->Unit( \
      benchmark::kMicrosecond)

KVBENCH_POLICY_BENCH(full);
KVBENCH_POLICY_BENCH(local);
KVBENCH_POLICY_BENCH(random);
KVBENCH_POLICY_BENCH(streaming_llm);
KVBENCH_POLICY_BENCH(h2o);
KVBENCH_POLICY_BENCH(scissorhands);
KVBENCH_POLICY_BENCH(tova);
KVBENCH_POLICY_BENCH(snapkv);
KVBENCH_POLICY_BENCH(pyramidkv);
KVBENCH_POLICY_BENCH(adakv);
KVBENCH_POLICY_BENCH(buzz);
KVBENCH_POLICY_BENCH(cascade);
KVBENCH_POLICY_BENCH(kvec);
KVBENCH_POLICY_BENCH(roco);
KVBENCH_POLICY_BENCH(bumblebee);

// Presses that run forwards of the model before they can compress (KVzip's repeats, KVCompose's
// second pass, DuoAttention's calibration chapters): a layer alone cannot drive them.
bool needs_model_forwards(const std::string& name) {
  return make_policy(name, kvbench::testing::runnable_params(name, bench_shape()))->rescoring() != nullptr;
}

// kvpress's presses and wrappers (policies/kvpress/), by their registered names, which are not
// identifiers: registered in main(), once every policy has registered itself. The presses that
// score a whole prompt once (CompactorPress, KVComposePress) have no decode step to time.
int main(int argc, char** argv) {
  for (const auto& info : registered_policies())
    if (info.name.rfind("kvpress:", 0) == 0 && info.name != "kvpress:no_press" && !kvbench::testing::prefill_only(info.name) &&
        !needs_model_forwards(info.name))
      benchmark::RegisterBenchmark(("PolicyStep/" + info.name).c_str(), PolicyStep, info.name)
          ->RangeMultiplier(4)
          ->Range(1024, 65536)
          ->Unit(benchmark::kMicrosecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
