#include "models/transformer.hpp"

#include "models/attention.hpp"
#include "policies/gqa_mode.hpp"

namespace kvbench::models {
namespace {

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  torch::Tensor xf = x.to(torch::kFloat32);
  torch::Tensor normed = xf * torch::rsqrt(xf.square().mean(-1, /*keepdim=*/true) + eps);
  return (normed.to(x.scalar_type()) * weight);
}

torch::Tensor project(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b = {}) {
  return b.defined() ? torch::addmm(b, x, w.t()) : torch::matmul(x, w.t());
}

}  // namespace

Transformer::Transformer(ModelConfig config, ModelWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)), rope_(config_) {}

int64_t Transformer::parameter_count() const {
  int64_t total = weights_.embedding.numel() + weights_.final_norm.numel();
  if (!config_.tied_embeddings) total += weights_.lm_head.numel();
  for (const auto& l : weights_.layers)
    for (const auto* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.q_norm, &l.k_norm,
                          &l.ffn_norm, &l.w_gate, &l.w_down, &l.w_up})
      if (t->defined()) total += t->numel();
  return total;
}

policies::KVCache Transformer::make_cache(policies::PositionMode mode) const {
  return policies::KVCache(config_.n_layers, config_.n_kv_heads, config_.head_dim,
                           torch::TensorOptions().dtype(dtype()).device(device()), mode);
}

torch::Tensor Transformer::forward(const std::vector<int64_t>& tokens, int64_t first_position,
                                   policies::KVCache& cache, const CacheControl& control, bool all_logits) const {
  torch::NoGradGuard no_grad;
  const int64_t T = static_cast<int64_t>(tokens.size());
  const int64_t H = config_.n_heads, kvh = config_.n_kv_heads, hd = config_.head_dim;
  auto long_opts = torch::TensorOptions().dtype(torch::kInt64);
  torch::Tensor ids = torch::tensor(tokens, long_opts).to(device());
  torch::Tensor positions = torch::arange(first_position, first_position + T, long_opts);

  AttentionRequest request;
  request.mode = cache.position_mode();
  if (control.policy) {
    request.stats = control.policy->wants();
    if (control.policy->logit_scale(2) != 1.0) {
      auto* policy = control.policy;
      request.logit_scale = [policy](int64_t n) { return policy->logit_scale(n); };
    }
  }
  if (control.inspect) request.stats.merge(control.inspect_wants);

  torch::Tensor x = weights_.embedding.index_select(0, ids);  // [T, dim]
  for (int64_t l = 0; l < config_.n_layers; ++l) {
    const LayerWeights& w = weights_.layers[l];
    torch::Tensor h = rms_norm(x, w.attn_norm, config_.norm_eps);
    torch::Tensor q = project(h, w.wq, w.bq).reshape({T, H, hd}).transpose(0, 1);
    torch::Tensor k = project(h, w.wk, w.bk).reshape({T, kvh, hd}).transpose(0, 1);
    torch::Tensor v = project(h, w.wv, w.bv).reshape({T, kvh, hd}).transpose(0, 1);
    if (w.q_norm.defined()) {  // qwen3: each head's q and k RMS-normalised over head_dim, before RoPE
      q = rms_norm(q, w.q_norm, config_.norm_eps);
      k = rms_norm(k, w.k_norm, config_.norm_eps);
    }
    if (request.mode == policies::PositionMode::kOriginal) {
      q = rope_.apply(q, positions);
      k = rope_.apply(k, positions);
    }
    policies::LayerCache& layer_cache = cache.layer(l);
    policies::append_model_heads(layer_cache, k, v, positions.to(device()));  // repeats for gqa: repeat
    AttentionResult attn = attend(q, layer_cache, rope_, request);
    if (control.inspect) control.inspect(l, layer_cache, attn.stats);
    if (control.on_attention) control.on_attention(l, q, k, v, positions, attn.output);
    if (control.policy) {
      control.policy->observe(l, layer_cache, attn.stats, control.phase);
      if (control.compress) control.policy->compress(l, layer_cache, control.phase);
    }
    x = x + project(attn.output.transpose(0, 1).reshape({T, H * hd}), w.wo);
    h = rms_norm(x, w.ffn_norm, config_.norm_eps);
    x = x + project(torch::silu(project(h, w.w_gate)) * project(h, w.w_up), w.w_down);
  }
  if (!all_logits) x = x.narrow(0, T - 1, 1);
  x = rms_norm(x, weights_.final_norm, config_.norm_eps);
  return project(x, weights_.lm_head).to(torch::kFloat32);
}

}  // namespace kvbench::models
