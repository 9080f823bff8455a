// ExpectedAttentionPress (Devoto et al., "Expected Attention: KV Cache Compression by Estimating
// Attention from Future Queries Distribution", 2025; kvpress/presses/expected_attention_press.py):
// the attention the next `n_future_positions` queries are expected to pay each token. The
// forward's queries before RoPE (without the first `n_sink` tokens, outliers) give a mean μ and a
// covariance Σ per query head; both are rotated by the RoPE matrix averaged over the future
// positions (R̄ = mean of R(p), p = q_len … q_len + n_future − 1: μ̄ = R̄μ, Σ̄ = R̄ΣR̄ᵀ). A key k's
// expected logit is μ̄·k/√d + kᵀΣ̄k/(2d) (`use_covariance`); softmax over the non-sink tokens, mean
// over each KV head's group, times (score + epsilon)·‖v‖ (`use_vnorm`); the sinks are kept (max+1).
// kvbench rotates with the model's own RoPE (either layout, any scaling), as kvpress's
// module.rotary_emb does. The registry's "expected_attention" is AdaKVPress around this press with
// epsilon 1e-2 (kvpress:expected_attention, adakv_press.cpp); the bare name is the press alone.
#include <cmath>
#include <functional>
#include <map>

#include "policies/gqa_mode.hpp"
#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"

namespace kvbench::policies::kvpress {
namespace {

class ExpectedAttentionPress : public Press {
  struct Forward {
    torch::Tensor queries;  // [heads, T, d], before RoPE
    std::function<torch::Tensor(const torch::Tensor&, int64_t)> rotate;
    int64_t position_end = 0;
  };
  struct Moments {
    torch::Tensor mean;        // [heads, d], rotated
    torch::Tensor covariance;  // [heads, d, d], rotated; undefined without use_covariance
  };

 public:
  explicit ExpectedAttentionPress(const nlohmann::json& p)
      : future_(p.at("n_future_positions")),
        sinks_(p.at("n_sink")),
        covariance_(p.at("use_covariance")),
        vnorm_(p.at("use_vnorm")),
        epsilon_(p.at("epsilon")) {}
  std::string name() const override { return "expected_attention"; }
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.queries_before_rope = true;
    return r;
  }
  // Only what the forward saw is kept here, replaced by the next forward's; the statistics are
  // computed when the layer is compressed.
  bool observes_only_to_compress() const override { return true; }
  void observe(int64_t layer, LayerCache&, const AttentionStats& stats, Phase) override {
    if (!stats.queries_before_rope.defined() || !stats.rotate) return;
    forwards_[layer] = {stats.queries_before_rope, stats.rotate, stats.position_end};
  }
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor&) override {
    auto it = forwards_.find(layer);
    if (it == forwards_.end()) throw std::logic_error("expected_attention: compress() without the forward's queries");
    const Moments m = moments(it->second);
    const int64_t heads = m.mean.size(0), kv_heads = cache.kv_heads(), d = cache.head_dim();
    torch::Tensor keys = repeat_rows(cache.keys().to(torch::kFloat32), heads / kv_heads);  // [heads, n, d]
    torch::Tensor logits = keys.matmul(m.mean.unsqueeze(-1)).squeeze(-1) / std::sqrt(static_cast<double>(d));
    if (covariance_) logits = logits + (keys.matmul(m.covariance) * keys).sum(-1) / static_cast<double>(d) / 2;
    torch::Tensor sinks = oldest_valid(cache, sinks_);  // [kv_heads, n]
    torch::Tensor excluded = sinks;
    if (!cache.all_valid()) excluded = excluded.logical_or(cache.valid().logical_not());
    logits = logits.masked_fill(repeat_rows(excluded, heads / kv_heads), -INFINITY);
    torch::Tensor s = mean_over_groups(logits.softmax(-1), kv_heads);
    if (vnorm_) s = (s + epsilon_) * cache.values().to(torch::kFloat32).norm(2, -1);
    return torch::where(sinks, s.amax({0, 1}) + 1, s);  // amax: max() has no meta kernel in libtorch 1.13
  }

 private:
  // The averaged rotation, transposed: row i = mean over the future positions of R(p)·e_i. Every
  // layer of a forward shares it (one RoPE, one position_end): built once per forward.
  const torch::Tensor& averaged_rotation(const Forward& f, int64_t d, const torch::TensorOptions& options) {
    if (!rotation_t_.defined() || rotation_end_ != f.position_end || rotation_t_.device() != options.device()) {
      torch::Tensor basis = torch::eye(d, options).unsqueeze(1).expand({d, future_, d});
      rotation_t_ = f.rotate(basis, f.position_end).mean(1);
      rotation_end_ = f.position_end;
    }
    return rotation_t_;
  }
  // μ̄ and Σ̄ of the forward's queries (before RoPE, the sinks left out), rotated by R̄.
  Moments moments(const Forward& f) {
    const torch::Tensor& q = f.queries;  // [heads, T, d]
    const int64_t T = q.size(1), d = q.size(2);
    // A forward of at most n_sink queries (a decode step) uses them all.
    const torch::Tensor used = T > sinks_ ? q.narrow(1, sinks_, T - sinks_) : q;
    const torch::Tensor& rotation_t = averaged_rotation(f, d, q.options());  // R̄ᵀ [d, d]
    Moments m;
    m.mean = used.mean(1).matmul(rotation_t);  // (R̄μ)ᵀ [heads, d]
    if (covariance_) {
      torch::Tensor centred = used - used.mean(1, /*keepdim=*/true);
      torch::Tensor cov = centred.transpose(1, 2).matmul(centred) / static_cast<double>(used.size(1));
      m.covariance = rotation_t.t().matmul(cov).matmul(rotation_t);  // R̄ Σ R̄ᵀ
    }
    return m;
  }

  int64_t future_, sinks_;
  bool covariance_, vnorm_;
  double epsilon_;
  std::map<int64_t, Forward> forwards_;  // per layer: the last forward's queries
  torch::Tensor rotation_t_;  // R̄ᵀ for the future positions from rotation_end_ on
  int64_t rotation_end_ = -1;
};

const PressRegistration expected_attention_registration(
    {"expected_attention", "Attention expected from the future queries' mean and covariance (averaged RoPE), × ‖v‖",
     "Devoto et al. 2025 (arXiv 2510.00636); kvpress expected_attention_press.py",
     {params::Param::integer("n_future_positions", 512, "future query positions the RoPE matrix is averaged over", 1),
      params::Param::integer("n_sink", 4, "first tokens: left out of the statistics and kept", 0),
      params::Param::flag("use_covariance", true, "add the queries' covariance term kᵀΣk/(2d)"),
      params::Param::flag("use_vnorm", true, "rescale by the value norm: (score + epsilon)·‖v‖"),
      params::Param::number("epsilon", 0.0, "added to the score before the value-norm rescaling", 0)},
     [](const nlohmann::json& p) { return std::make_unique<ExpectedAttentionPress>(p); },
     /*bare_name=*/true, /*prefixed=*/false});

}  // namespace
}  // namespace kvbench::policies::kvpress
