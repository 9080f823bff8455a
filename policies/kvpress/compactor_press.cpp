// CompactorPress (Chari & Van Durme 2025, "Compactor: Calibrated Query-Agnostic KV Cache
// Compression with Approximate Leverage Scores"; kvpress compactor_press.py with leverage_press.py
// and non_causal_attention_press.py). Between the first sink_size_start and the last
// sink_size_end tokens (kept: padded with the layer's highest score), a token scores
//   blending · z(leverage of its pre-RoPE key) + z(non-causal chunked attention × ‖v‖, pooled),
// z = (x − mean) / std over the layer's heads and tokens. Leverage: the centred pre-RoPE keys times
// a Gaussian sketch Φ [d, k] / √k (torch.randn, drawn per layer from a generator seeded with the
// job's seed, as kvpress draws from torch's global one), then xᵢᵀ(XᵀX + jitter·I)⁻¹xᵢ by Cholesky.
// Attention: each chunk of chunk_size queries (after RoPE) attends, unscaled and non-causally, to
// its own chunk of keys; a key's score sums its columns, averaged over the KV head's query heads.
// Prefill only, as kvpress's: it scores a whole prompt once.
#include <cmath>
#include <stdexcept>

#include "policies/gqa_mode.hpp"
#include "policies/kvpress/press.hpp"

namespace kvbench::policies::kvpress {
namespace {

// z-score over every element (torch's std: unbiased), the deviation clamped at 1e-6.
torch::Tensor z_scores(const torch::Tensor& x) { return (x - x.mean()) / x.std().clamp_min(1e-6); }

// R(−θ)k from rotate (R(θ)): with J negating the second element of each rotated pair,
// R(−θ) = J·R(θ)·J. The pair layout (half-split or interleaved) is read from rotate itself.
torch::Tensor unrotate(const std::function<torch::Tensor(const torch::Tensor&, int64_t)>& rotate, const torch::Tensor& k) {
  const int64_t d = k.size(-1);
  torch::Tensor probe = torch::zeros({1, 1, d}, k.options());
  probe.index_put_({0, 0, 0}, 1.0);
  const bool interleaved = rotate(probe, 1)[0][0][1].item<float>() != 0.0f;  // e₀'s partner: e₁ or e_{d/2}
  torch::Tensor j = torch::ones({d}, k.options());
  if (interleaved) j.slice(0, 1, d, 2).fill_(-1.0);
  else j.slice(0, d / 2, d).fill_(-1.0);
  return rotate(k * j, 0) * j;
}

// kvpress's chol_with_jitter(G, jitter=1e-2, max_tries=5): jitter 1e-2, then ×10 until it factors.
torch::Tensor cholesky_with_jitter(const torch::Tensor& g) {
  const torch::Tensor identity = torch::eye(g.size(-1), g.options());
  double jitter = 1e-2;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto [l, info] = torch::linalg_cholesky_ex(g + jitter * identity, /*upper=*/false, /*check_errors=*/false);
    if ((info == 0).all().item<bool>()) return l;
    jitter = std::max(1e-8, jitter == 0.0 ? 1e-2 : 10.0 * jitter);
  }
  throw std::runtime_error("kvpress:compactor: the keys' sketched Gram matrix is not positive definite after 5 jitters");
}

class CompactorPress : public Press {
 public:
  explicit CompactorPress(const nlohmann::json& p)
      : sink_start_(p.at("sink_size_start")),
        sink_end_(p.at("sink_size_end")),
        chunk_(p.at("chunk_size")),
        sketch_(p.at("sketch_dimension")),
        blending_(nullable<double>(p.at("blending"))) {}
  std::string name() const override { return "kvpress:compactor"; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.queries = true;              // the chunked attention's queries, after RoPE
    r.queries_before_rope = true;  // for the rotation, which recovers the keys before RoPE
    return r;
  }
  void begin(const SequenceInfo& info) override {
    info_ = info;
    generator_ = at::detail::createCPUGenerator(info.seed);
    forwards_.clear();
  }
  bool observes_only_to_compress() const override { return true; }  // forwards_: replaced each forward
  void observe(int64_t layer, LayerCache&, const AttentionStats& stats, Phase phase) override {
    if (stats.queries.defined() && stats.rotate) forwards_[layer] = {stats.queries, stats.rotate, phase};
  }
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor&) override {
    auto it = forwards_.find(layer);
    const int64_t n = cache.size();
    if (it == forwards_.end() || it->second.phase != Phase::kPrefill || it->second.queries.size(1) != n ||
        !cache.in_arrival_order())
      throw std::invalid_argument(
          "kvpress:compactor scores a whole prompt once (kvpress: prefill only): run it under --protocol oneshot");
    const Forward& f = it->second;
    const int64_t left = std::min(sink_start_, n), right = std::min(sink_end_, std::max<int64_t>(0, n - left));
    const int64_t S = n - left - right;
    const torch::Tensor keys = cache.keys().to(torch::kFloat32);
    if (S < 2) return torch::zeros({cache.kv_heads(), n}, keys.options());  // no statistics over one token: keep by order
    torch::Tensor scores = blending() * leverage(unrotate(f.rotate, keys).narrow(1, left, S)) +
                           attention(f.queries.narrow(1, left, S), keys.narrow(1, left, S),
                                     cache.values().to(torch::kFloat32).narrow(1, left, S));
    const torch::Tensor top = scores.max();  // the sinks' score, kept on the device
    return torch::cat({top.expand({scores.size(0), left}), scores, top.expand({scores.size(0), right})}, 1);
  }

 private:
  struct Forward {
    torch::Tensor queries;  // [heads, T, d] after RoPE
    std::function<torch::Tensor(const torch::Tensor&, int64_t)> rotate;
    Phase phase;
  };

  // kvpress: blending, else the compression ratio (kvbench: the budget's, or 1 − budget / prompt).
  double blending() const {
    if (blending_) return *blending_;
    if (info_.compression_ratio) return *info_.compression_ratio;
    return info_.unlimited() ? 0.0 : 1.0 - static_cast<double>(info_.budget) / static_cast<double>(info_.prompt_len);
  }

  torch::Tensor leverage(const torch::Tensor& keys_before_rope) {  // [kv, S, d] -> [kv, S]
    const int64_t kv = keys_before_rope.size(0), d = keys_before_rope.size(2);
    const torch::Tensor phi =
        torch::randn({1, kv, d, sketch_}, generator_, keys_before_rope.scalar_type()).squeeze(0) *
        (1.0 / std::sqrt(static_cast<double>(sketch_)));
    torch::Tensor x = keys_before_rope - keys_before_rope.mean(-2, /*keepdim=*/true);
    x = x.matmul(phi).to(torch::kFloat32);
    const torch::Tensor xt = x.transpose(-2, -1);
    const torch::Tensor g = xt.matmul(x);
    const torch::Tensor l = cholesky_with_jitter(0.5 * (g + g.transpose(-2, -1)));
    const torch::Tensor inv_xt = torch::cholesky_solve(xt, l, /*upper=*/false);
    return z_scores((x * inv_xt.transpose(-2, -1)).sum(-1).clamp_min(0));
  }

  // NonCausalAttnPress: [heads, S, d] queries, [kv, S, d] keys and values -> [kv, S].
  torch::Tensor attention(const torch::Tensor& queries, const torch::Tensor& keys, const torch::Tensor& values) const {
    const int64_t H = queries.size(0), S = queries.size(1), d = queries.size(2), kv = keys.size(0);
    const int64_t chunks = (S + chunk_ - 1) / chunk_, padded = chunks * chunk_;
    const torch::Tensor q = torch::constant_pad_nd(queries, {0, 0, 0, padded - S}, 0);
    const torch::Tensor k = torch::constant_pad_nd(repeat_rows(keys, H / kv), {0, 0, 0, padded - S}, 0);
    torch::Tensor dots = q.view({H, chunks, chunk_, d}).matmul(k.view({H, chunks, chunk_, d}).transpose(-2, -1));
    // The last chunk: padded queries' rows 0, then padded keys' columns −1e-9 (not −inf, as kvpress).
    const torch::Tensor padding = torch::arange(padded - chunk_, padded, torch::TensorOptions().device(q.device())) >= S;
    torch::Tensor last = dots.select(1, chunks - 1);
    last.masked_fill_(padding.view({1, chunk_, 1}), 0.0);
    last.masked_fill_(padding.view({1, 1, chunk_}), -1e-9);
    torch::Tensor a = dots.to(torch::kFloat32).softmax(-1).sum(-2).reshape({H, padded}).narrow(1, 0, S);
    a = a.view({kv, H / kv, S}).mean(1) * values.norm(2, -1);
    a = torch::avg_pool1d(a.unsqueeze(0), {3}, {1}, {1}).squeeze(0);  // count_include_pad: the ends over 3
    return z_scores(a);
  }

  int64_t sink_start_, sink_end_, chunk_, sketch_;
  std::optional<double> blending_;
  SequenceInfo info_;
  at::Generator generator_;
  std::map<int64_t, Forward> forwards_;
};

const PressRegistration compactor_registration(
    {"compactor", "Blended leverage of the pre-RoPE keys (Gaussian sketch) and non-causal chunked attention × ‖v‖",
     "Chari & Van Durme 2025 (arXiv 2507.08143); kvpress compactor_press.py, leverage_press.py, "
     "non_causal_attention_press.py",
     {params::Param::integer("sink_size_start", 8, "first tokens always kept", 0),
      params::Param::integer("sink_size_end", 4, "last tokens always kept", 0),
      params::Param::integer("chunk_size", 256, "queries and keys per chunk of the non-causal attention", 1),
      params::Param::integer("sketch_dimension", 48, "columns k of the Gaussian sketch of the keys", 1),
      params::Param::number("blending", nullptr,
                            "weight of the leverage scores; null = the compression ratio (kvpress's default)", 0)
          .or_null()},
     // Only kvpress's name: a press defined for one compression after the prefill (as the other
     // kvpress:<key> variants, which the demo's streamed grid leaves out).
     [](const nlohmann::json& p) { return std::make_unique<CompactorPress>(p); }});

}  // namespace
}  // namespace kvbench::policies::kvpress
