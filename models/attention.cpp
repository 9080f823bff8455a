#include "models/attention.hpp"

#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/cpu_kernels.hpp"
#ifdef KVBENCH_SPLIT_K_DECODE
#include "models/cuda/split_k_decode.hpp"
#endif

namespace kvbench::models {
namespace {

// [T, n] true where query t may attend slot j: every slot before the block, and the block's
// own slots up to t.
torch::Tensor causal_mask(int64_t t_begin, int64_t t_len, int64_t T, int64_t n, torch::Device device) {
  auto opts = torch::TensorOptions().dtype(torch::kInt64).device(device);
  torch::Tensor rows = torch::arange(t_begin, t_begin + t_len, opts).unsqueeze(1);
  torch::Tensor cols = torch::arange(n, opts).unsqueeze(0);
  return cols <= rows + (n - T);
}

#if TORCH_VERSION_MAJOR >= 2
// libtorch 1.13 has no fused kernel: it always takes the chunked matmul-softmax below.
bool can_fuse(const AttentionRequest& request, const policies::LayerCache& cache) {
  return request.path != AttentionPath::kChunked && !request.logit_scale && cache.all_valid();
}
#endif

// Column statistics sum over every query; the row statistics (the last query's row, an
// observation window) need only the forward's last queries.
bool needs_every_query(const policies::StatsRequest& s) {
  return s.column_sums || s.column_sq_sums || s.column_max || s.kv_column_sq_sums || s.kv_column_above_mean;
}

// Row statistics of a long forward (SnapKV's observation window over a prompt): the output
// needs no probabilities (the fused kernel where there is one), the rows come from a second pass
// over the last queries alone.
int64_t stats_rows(const policies::StatsRequest& want, int64_t T) {
  return std::min(T, std::max<int64_t>(want.window, want.last_row ? 1 : 0));
}
bool rows_apart(const policies::StatsRequest& want, int64_t T) {
  return want.any() && !needs_every_query(want) && stats_rows(want, T) < T;
}

// kSplitK's output for a decoding query the kernel takes, else undefined. Not under a logit scale
// (BUZZ's per-key-count scale is applied to q and the kernel is not checked with it).
torch::Tensor split_k_output(const AttentionRequest& request, const torch::Tensor& q, const torch::Tensor& K,
                             const torch::Tensor& V, const torch::Tensor& valid) {
#ifdef KVBENCH_SPLIT_K_DECODE
  if (request.path == AttentionPath::kSplitK && !request.logit_scale && cuda::split_k_decode_applies(q, K, V))
    return cuda::split_k_decode(q, K, V, valid);
#else
  (void)request, (void)q, (void)K, (void)V, (void)valid;
#endif
  return {};
}

// kCacheSlot: the position of every slot is its rank in arrival order (0 = oldest), so slot order
// does not matter (SlotOrder::kAny caches). Computed on the device from the original positions.
torch::Tensor rotate_keys_by_rank(const torch::Tensor& K, const policies::LayerCache& cache, const Rope& rope) {
  const int64_t n = cache.size();
  if (cache.in_arrival_order()) return rope.apply_heads(K, 0);
  if (!cache.homogeneous()) throw std::logic_error("cache_slot positions need every head to keep the same tokens");
  torch::Tensor order = cache.arrival_order().select(0, 0);  // slots, oldest first
  torch::Tensor rank = torch::empty_like(order).scatter_(0, order, torch::arange(n, order.options()));
  return rope.apply_heads_at(K, rank, n);
}

#if TORCH_VERSION_MAJOR >= 2
// GQA without repeating K/V: a decoding query's g heads of a group become g query rows of its KV
// head; a block of queries uses SDPA's own GQA support where the libtorch has it (2.5+), else
// repeats K/V for that forward only.
torch::Tensor fused_attention(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V, int64_t kvh) {
  const int64_t H = q.size(0), T = q.size(1), hd = q.size(2), n = K.size(1), g = H / kvh;
  if (T == 1) {
    torch::Tensor Q = q.reshape({1, kvh, g, hd});
    return at::scaled_dot_product_attention(Q, K.unsqueeze(0), V.unsqueeze(0)).reshape({H, 1, hd});
  }
  c10::optional<torch::Tensor> mask;
  const bool square = T == n;  // the whole cache is this forward: SDPA's own causal mask
  if (!square) mask = causal_mask(0, T, T, n, q.device());
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
  return at::scaled_dot_product_attention(q.unsqueeze(0), K.unsqueeze(0), V.unsqueeze(0), mask, 0.0, square,
                                          c10::nullopt, /*enable_gqa=*/g > 1)
      .squeeze(0);
#else
  torch::Tensor Kx = g == 1 ? K.unsqueeze(0) : K.unsqueeze(1).expand({kvh, g, n, hd}).reshape({1, H, n, hd});
  torch::Tensor Vx = g == 1 ? V.unsqueeze(0) : V.unsqueeze(1).expand({kvh, g, n, hd}).reshape({1, H, n, hd});
  return at::scaled_dot_product_attention(q.unsqueeze(0), Kx, Vx, mask, 0.0, square).squeeze(0);
#endif
}
#endif

// The chunked matmul-softmax over the forward's queries t_begin .. T−1 (of T): their output rows
// when `output` is set, and the statistics `want` asks for over those queries.
void chunked_attention(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V, const torch::Tensor& valid,
                       int64_t t_begin, const policies::StatsRequest& want, bool output, int64_t max_score_elements,
                       AttentionResult& result) {
  const int64_t H = q.size(0), T = q.size(1), hd = q.size(2);
  const int64_t kvh = K.size(0), g = H / kvh, n = K.size(1);
  const auto device = q.device();
  const double base_scale = 1.0 / std::sqrt(static_cast<double>(hd));
  const int64_t window = std::min(want.window, T);
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  if (want.column_sums) result.stats.column_sums = torch::zeros({H, n}, f32);
  if (want.column_sq_sums) result.stats.column_sq_sums = torch::zeros({H, n}, f32);
  if (want.column_max) result.stats.column_max = torch::zeros({H, n}, f32);  // probabilities are >= 0
  if (want.kv_column_sq_sums) result.stats.kv_column_sq_sums = torch::zeros({kvh, n}, f32);
  if (want.kv_column_above_mean) result.stats.kv_column_above_mean = torch::zeros({kvh, n}, f32);
  std::vector<torch::Tensor> window_parts, outputs;

  // Grouped matmuls: the g query heads of a KV head are rows of one [g·len, hd] × [hd, n]
  // product, so K and V are never repeated per query head.
  const int64_t q_chunk = std::clamp<int64_t>(max_score_elements / std::max<int64_t>(1, H * n), 1, T);
  // A tiny model's decoding query: native loops instead of two bmm's per-batch dispatch.
  const bool small = t_begin == 0 && cpu::small_decode(q, K, V);
  torch::Tensor Qg, Kt;  // [kvh, g, T, hd] and [kvh, hd, n], for the bmm path
  if (!small) {
    Qg = q.reshape({kvh, g, T, hd});
    Kt = K.transpose(1, 2);
  }
  for (int64_t t0 = t_begin; t0 < T; t0 += q_chunk) {
    const int64_t len = std::min(q_chunk, T - t0);
    torch::Tensor scores;
    if (small) {
      scores = cpu::grouped_scores(q, K, static_cast<float>(base_scale)).view({kvh, g, 1, n});
    } else {
      torch::Tensor Qc = Qg.narrow(2, t0, len).reshape({kvh, g * len, hd});
      scores = torch::bmm(Qc, Kt).to(torch::kFloat32).view({kvh, g, len, n});
      scores.mul_(base_scale);  // a fresh tensor: the product (or its float32 copy)
    }
    // A single query with every slot valid sees everything: no mask to build.
    torch::Tensor allowed;
    if (T > 1 || valid.defined()) {
      allowed = causal_mask(t0, len, T, n, device).reshape({1, 1, len, n});
      if (valid.defined()) allowed = allowed.logical_and(valid.reshape({kvh, 1, 1, n}));
      scores.masked_fill_(allowed.logical_not(), -std::numeric_limits<float>::infinity());
    }
    torch::Tensor probs = torch::softmax(scores, -1);
    if (output && small) outputs.push_back(cpu::grouped_mix(probs.view({kvh, g, n}), V).view({kvh, g, 1, hd}));
    else if (output) outputs.push_back(torch::bmm(probs.to(V.scalar_type()).view({kvh, g * len, n}), V).view({kvh, g, len, hd}));
    if (want.any()) {
      torch::Tensor p = probs.reshape({H, len, n});
      if (want.column_sums) result.stats.column_sums += p.sum(1);
      if (want.column_sq_sums) result.stats.column_sq_sums += p.square().sum(1);
      if (want.column_max) result.stats.column_max = torch::maximum(result.stats.column_max, p.amax(1));
      if (want.kv_column_sq_sums || want.kv_column_above_mean) {
        torch::Tensor group_mean = probs.mean(1);  // [kvh, len, n]
        if (want.kv_column_sq_sums) result.stats.kv_column_sq_sums += group_mean.square().sum(1);
        if (want.kv_column_above_mean) {
          if (!allowed.defined()) allowed = torch::ones({1, 1, len, n}, torch::TensorOptions().dtype(torch::kBool).device(device));
          torch::Tensor visible = allowed.sum(-1).to(torch::kFloat32).reshape({-1, len, 1});  // softmax row mean = 1/visible
          result.stats.kv_column_above_mean += (group_mean > visible.reciprocal()).to(torch::kFloat32).sum(1);
        }
      }
      if (want.last_row && t0 + len == T) result.stats.last_row = p.select(1, len - 1).clone();
      const int64_t w_begin = std::max(t0, T - window);
      if (window > 0 && w_begin < t0 + len) window_parts.push_back(p.narrow(1, w_begin - t0, t0 + len - w_begin));
    }
  }
  if (output) result.output = (outputs.size() == 1 ? outputs[0] : torch::cat(outputs, 2)).reshape({H, T - t_begin, hd});
  if (!window_parts.empty()) result.stats.window_rows = torch::cat(window_parts, 1);
}

// What every statistics request gets besides the chunked pass's sums and rows.
void finish_statistics(const torch::Tensor& q, int64_t n, const policies::StatsRequest& want,
                       policies::AttentionStats& stats) {
  if (want.queries) stats.queries = q.to(torch::kFloat32);
  if (want.any()) {
    torch::Tensor j = torch::arange(n, torch::TensorOptions().dtype(torch::kFloat32).device(q.device()));
    stats.column_counts = torch::clamp(static_cast<double>(n) - j, 0, static_cast<double>(q.size(1)));
  }
  stats.n_queries = q.size(1);
}

}  // namespace

AttentionResult attend(const torch::Tensor& q_in, const policies::LayerCache& cache, const Rope& rope,
                       const AttentionRequest& request) {
  const int64_t T = q_in.size(1), n = cache.size();
  torch::Tensor K = cache.keys(), V = cache.values();
  torch::Tensor q = q_in;
  if (request.mode == policies::PositionMode::kCacheSlot) {
    // Keys are stored un-rotated; rotate by arrival rank, the queries by their own ranks.
    K = rotate_keys_by_rank(K, cache, rope);
    q = rope.apply_heads(q, n - T);
  }
  if (request.logit_scale) {
    std::vector<float> s(T);
    for (int64_t t = 0; t < T; ++t) s[t] = static_cast<float>(request.logit_scale(n - T + t + 1));
    q = q * torch::tensor(s).to(q.device(), q.scalar_type(), /*non_blocking=*/true).reshape({1, T, 1});
  }
  const policies::StatsRequest& want = request.stats;
  AttentionResult result;
  const torch::Tensor valid = cache.valid();  // [kvh, n] or undefined
  result.output = split_k_output(request, q, K, V, valid);
  if (!want.any() || rows_apart(want, T)) {
#if TORCH_VERSION_MAJOR >= 2
    if (!result.output.defined() && can_fuse(request, cache)) result.output = fused_attention(q, K, V, cache.kv_heads());
#endif
    if (!result.output.defined()) chunked_attention(q, K, V, valid, 0, {}, true, request.max_score_elements, result);
    if (want.any()) chunked_attention(q, K, V, valid, T - stats_rows(want, T), want, false, request.max_score_elements, result);
  } else {
    // Statistics over every query: one chunked pass gives them and the output, or them alone where
    // the split-K kernel gave a decoding query's output (it reads V once, split over the keys).
    chunked_attention(q, K, V, valid, 0, want, !result.output.defined(), request.max_score_elements, result);
  }
  finish_statistics(q, n, want, result.stats);
  return result;
}

bool fused_output(const policies::StatsRequest& want, int64_t T, AttentionPath path) {
#if TORCH_VERSION_MAJOR >= 2
  return path != AttentionPath::kChunked && (!want.any() || rows_apart(want, T));
#else
  (void)want, (void)T, (void)path;
  return false;
#endif
}

policies::AttentionStats attention_statistics(const torch::Tensor& q, const policies::LayerCache& cache,
                                              const policies::StatsRequest& want, int64_t max_score_elements) {
  AttentionResult result;
  const int64_t T = q.size(1);
  if (want.any()) {
    // The pass attend() takes, without its output rows: chunked_attention's statistics do not
    // depend on whether it also mixes the values.
    chunked_attention(q, cache.keys(), cache.values(), cache.valid(), rows_apart(want, T) ? T - stats_rows(want, T) : 0,
                      want, false, max_score_elements, result);
  }
  finish_statistics(q, cache.size(), want, result.stats);
  return result.stats;
}

}  // namespace kvbench::models
