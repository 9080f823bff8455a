#include "models/transformer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/attention.hpp"
#include "models/cpu_kernels.hpp"
#include "models/cpu_threads.hpp"
#include "models/decode_batch.hpp"
#include "models/fixed_order_projection.hpp"
#include "tokenizers/model_error.hpp"
#include "policies/gqa_mode.hpp"

namespace kvbench::models {
namespace {

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  // One row on the CPU (a decoding token): one native loop instead of six ops.
  if (x.numel() == x.size(-1) && cpu::plain_f32(x) && cpu::plain_f32(weight)) return cpu::rms_norm_row(x, weight, eps);
  if (x.scalar_type() == torch::kFloat32) {  // the same arithmetic, fewer temporaries
    torch::Tensor inv = x.square().mean(-1, /*keepdim=*/true);
    inv.add_(eps).rsqrt_();
    torch::Tensor out = x * inv;
    return out.mul_(weight);
  }
  torch::Tensor xf = x.to(torch::kFloat32);
  torch::Tensor normed = xf * torch::rsqrt(xf.square().mean(-1, /*keepdim=*/true) + eps);
  return (normed.to(x.scalar_type()) * weight);
}

// One float32 token on the CPU: a matrix-vector product that reads each weight once (a one-row
// GEMM has OpenBLAS first pack the whole weight matrix, several times slower), summed in the fixed
// order that gives the row the same bits when a ring of sessions decodes it in a batch with others'
// rows (models/decode_batch.hpp).
bool one_cpu_row(const torch::Tensor& x) {
  return x.size(0) == 1 && x.device().is_cpu() && x.scalar_type() == torch::kFloat32;
}

torch::Tensor project_row(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& base) {
  if (w.stride(1) != 1 || w.stride(0) != w.size(1) || w.scalar_type() != torch::kFloat32) {  // not a plain weight: BLAS
    const torch::Tensor v = x.reshape({-1});
    return (base.defined() ? torch::addmv(base.reshape({-1}), w, v) : torch::mv(w, v)).unsqueeze(0);
  }
  ++decode_rows_of_this_thread().projected;
  const int threads = std::max(1, blas_threads());
  const torch::Tensor row = x.reshape({1, -1});
  if (DecodeBatch* batch = DecodeBatch::current()) return batch->project(row, w, base, threads);
  return cpu::fixed_order_project(row, w, base, threads);
}

// x [T, in] · wᵀ (+ b), w [out, in].
torch::Tensor project(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b = {}) {
  if (one_cpu_row(x)) return project_row(x, w, b);
  return b.defined() ? torch::addmm(b, x, w.t()) : torch::matmul(x, w.t());
}

// residual + x · wᵀ in one op (the residual add fused into the product).
torch::Tensor project_add(const torch::Tensor& residual, const torch::Tensor& x, const torch::Tensor& w) {
  if (one_cpu_row(x)) return project_row(x, w, residual.reshape({1, -1}));
  return torch::addmm(residual, x, w.t());
}

// The row blocks as one [Σ rows, cols] matrix: the buffer they already share when they are
// consecutive blocks of it (as to_device lays them out), else a concatenated copy.
torch::Tensor stacked_rows(const std::vector<torch::Tensor>& parts) {
  const torch::Tensor& first = parts[0];
  const int64_t cols = first.size(1);
  int64_t rows = 0;
  bool shared = true;
  for (const torch::Tensor& p : parts) {
    shared = shared && p.is_contiguous() && p.size(1) == cols && p.is_alias_of(first) &&
             p.storage_offset() == first.storage_offset() + rows * cols;
    rows += p.size(0);
  }
  return shared ? first.as_strided({rows, cols}, {cols, 1}, first.storage_offset()) : torch::cat(parts, 0);
}

// A projection's output with PEFT's LoRA branch added: base + (x Aᵀ) Bᵀ · scaling. The branch runs
// in float32, as peft's autocast_adapter_dtype keeps a half-precision model's adapter, and the sum
// is cast back. Unadapted (or no adapter): base as it is.
torch::Tensor with_lora(const torch::Tensor& base, const torch::Tensor& x, const LoraAdapter* adapter, int64_t layer, LoraTarget target) {
  if (!adapter) return base;
  const LoraPair& p = adapter->pair(layer, target);
  if (!p.defined()) return base;
  const torch::Tensor branch = x.to(torch::kFloat32).matmul(p.a.to(x.device()).t()).matmul(p.b.to(x.device()).t()) * adapter->scaling;
  return (base.to(torch::kFloat32) + branch).to(base.scalar_type());
}

}  // namespace

// q, k and v (and gate and up) are one matrix each, so a layer runs two input projections instead
// of five; the separate weights become views into them (no second copy is kept).
Transformer::Transformer(ModelConfig config, ModelWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)), rope_(config_) {
  const int64_t q_rows = config_.n_heads * config_.head_dim, kv_rows = config_.n_kv_heads * config_.head_dim;
  for (LayerWeights& w : weights_.layers) {
    FusedLayer f;
    f.wqkv = stacked_rows({w.wq, w.wk, w.wv});
    w.wq = f.wqkv.narrow(0, 0, q_rows);
    w.wk = f.wqkv.narrow(0, q_rows, kv_rows);
    w.wv = f.wqkv.narrow(0, q_rows + kv_rows, kv_rows);
    if (w.bq.defined()) {
      f.bqkv = torch::cat({w.bq, w.bk, w.bv}, 0);
      w.bq = f.bqkv.narrow(0, 0, q_rows);
      w.bk = f.bqkv.narrow(0, q_rows, kv_rows);
      w.bv = f.bqkv.narrow(0, q_rows + kv_rows, kv_rows);
    }
    const int64_t hidden = w.w_gate.size(0);
    f.w_gate_up = stacked_rows({w.w_gate, w.w_up});
    w.w_gate = f.w_gate_up.narrow(0, 0, hidden);
    w.w_up = f.w_gate_up.narrow(0, hidden, hidden);
    fused_.push_back(std::move(f));
  }
}

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
  c10::InferenceMode inference;
  // Checked on the host: narrow() would wrap a negative id, index_select throws libtorch's own error.
  for (int64_t id : tokens)
    if (id < 0 || id >= weights_.embedding.size(0))
      throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary (" +
                              std::to_string(weights_.embedding.size(0)) + " ids)");
  torch::Tensor x;  // [T, dim]
  if (tokens.size() == 1) {
    x = weights_.embedding.narrow(0, tokens[0], 1);  // a view: no op, no copy to the device
  } else {
    torch::Tensor ids = torch::tensor(tokens, torch::kInt64);
    if (!device().is_cpu()) ids = ids.to(device(), /*non_blocking=*/true);
    x = weights_.embedding.index_select(0, ids);
  }
  return run_decoder(x, &tokens, first_position, cache, control, all_logits, nullptr);
}

torch::Tensor Transformer::forward_embeddings(const torch::Tensor& embeddings, int64_t first_position, policies::KVCache& cache,
                                              const CacheControl& control, bool all_logits, const LoraAdapter* adapter) const {
  c10::InferenceMode inference;
  if (embeddings.dim() != 2 || embeddings.size(0) < 1 || embeddings.size(1) != config_.dim)
    throw std::invalid_argument("input embeddings must be [tokens, " + std::to_string(config_.dim) + "] (the model's hidden size), got " +
                                c10::str(embeddings.sizes()));
  if (adapter) check_lora_shapes(*adapter);
  return run_decoder(embeddings.to(device(), dtype()), nullptr, first_position, cache, control, all_logits, adapter);
}

void Transformer::check_lora_shapes(const LoraAdapter& adapter) const {
  if (static_cast<int64_t>(adapter.layers.size()) > config_.n_layers)
    throw ModelLoadError(adapter.origin, "the adapter adapts layer " + std::to_string(adapter.layers.size() - 1) + " of a model with " +
                                             std::to_string(config_.n_layers) + " layers");
  for (int64_t l = 0; l < static_cast<int64_t>(adapter.layers.size()); ++l) {
    const LayerWeights& w = weights_.layers[l];
    const std::array<const torch::Tensor*, kLoraTargets> base = {&w.wq, &w.wk, &w.wv, &w.wo, &w.w_gate, &w.w_up, &w.w_down};
    for (size_t t = 0; t < kLoraTargets; ++t) {
      const LoraPair& p = adapter.layers[l][t];
      if (p.defined() && (p.a.size(1) != base[t]->size(1) || p.b.size(0) != base[t]->size(0)))
        throw ModelLoadError(adapter.origin, "tensor '" + p.name + "': lora_A " + c10::str(p.a.sizes()) + " and lora_B " + c10::str(p.b.sizes()) +
                                                 " do not adapt the model's " + lora_target_name(static_cast<LoraTarget>(t)) + " " +
                                                 c10::str(base[t]->sizes()) + " ([out, in])");
    }
  }
}

torch::Tensor Transformer::run_decoder(torch::Tensor x, const std::vector<int64_t>* tokens, int64_t first_position, policies::KVCache& cache,
                                  const CacheControl& control, bool all_logits, const LoraAdapter* adapter) const {
  const int64_t T = x.size(0);
  const int64_t H = config_.n_heads, kvh = config_.n_kv_heads, hd = config_.head_dim;
  const torch::Device dev = device();
  // Positions are made on the device (token ids go there without waiting for it, below).
  torch::Tensor positions = torch::arange(first_position, first_position + T, torch::TensorOptions().dtype(torch::kInt64).device(dev));

  AttentionRequest request;
  request.mode = cache.position_mode();
  request.path = control.attention;
  // A policy whose observations serve only its compression sees none in a forward that does not
  // compress (Policy::observes_only_to_compress): no statistics, so the fused kernel runs.
  const bool observing = control.policy && (control.compress || !control.policy->observes_only_to_compress());
  if (control.policy) {
    if (observing) request.stats = control.policy->wants();
    if (control.policy->logit_scale(2) != 1.0) {
      auto* policy = control.policy;
      request.logit_scale = [policy](int64_t n) { return policy->logit_scale(n); };
    }
  }
  if (control.inspect) request.stats.merge(control.inspect_wants);
  const bool rotate_now = request.mode == policies::PositionMode::kOriginal;

  for (int64_t l = 0; l < config_.n_layers; ++l) {
    const LayerWeights& w = weights_.layers[l];
    const FusedLayer& f = fused_[l];
    torch::Tensor h = rms_norm(x, w.attn_norm, config_.norm_eps);
    torch::Tensor qkv = project(h, f.wqkv, f.bqkv);
    if (adapter) {
      const int64_t q_rows = H * hd, kv_rows = kvh * hd;
      qkv = torch::cat({with_lora(qkv.narrow(1, 0, q_rows), h, adapter, l, LoraTarget::kQ),
                        with_lora(qkv.narrow(1, q_rows, kv_rows), h, adapter, l, LoraTarget::kK),
                        with_lora(qkv.narrow(1, q_rows + kv_rows, kv_rows), h, adapter, l, LoraTarget::kV)}, 1);
    }
    qkv = qkv.view({T, H + 2 * kvh, hd});
    // q and k rotate together (token-major [T, heads, hd]); kCacheSlot rotates at read time.
    torch::Tensor qk = qkv.narrow(1, 0, H + kvh);
    torch::Tensor projected_queries, projected_keys;
    if (request.stats.projections) {
      projected_queries = qk.narrow(1, 0, H).transpose(0, 1).to(torch::kFloat32);
      projected_keys = qk.narrow(1, H, kvh).transpose(0, 1).to(torch::kFloat32);
    }
    if (w.q_norm.defined()) {  // qwen3: each head's q and k RMS-normalised over head_dim, before RoPE
      qk = torch::cat({rms_norm(qk.narrow(1, 0, H), w.q_norm, config_.norm_eps),
                       rms_norm(qk.narrow(1, H, kvh), w.k_norm, config_.norm_eps)}, 1);
    }
    torch::Tensor queries_before_rope;
    if (request.stats.queries_before_rope) queries_before_rope = qk.narrow(1, 0, H).transpose(0, 1).to(torch::kFloat32);
    if (rotate_now) qk = rope_.apply_tokens(qk, first_position);
    torch::Tensor q = qk.narrow(1, 0, H).transpose(0, 1);   // [H, T, hd]
    torch::Tensor k = qk.narrow(1, H, kvh).transpose(0, 1);  // [kvh, T, hd]
    torch::Tensor v = qkv.narrow(1, H + kvh, kvh).transpose(0, 1);
    policies::LayerCache& layer_cache = cache.layer(l);
    policies::append_model_heads(layer_cache, k, v, positions);  // repeats for gqa: repeat
    AttentionResult attn = attend(q, layer_cache, rope_, request);
    if (control.inspect) control.inspect(l, layer_cache, attn.stats);
    if (control.on_attention) control.on_attention(l, q, k, v, positions, attn.output);
    if (observing) {
      attn.stats.position_end = first_position + T;
      attn.stats.tokens = tokens;
      if (queries_before_rope.defined()) attn.stats.queries_before_rope = queries_before_rope;
      if (projected_queries.defined()) attn.stats.projected_queries = projected_queries, attn.stats.projected_keys = projected_keys;
      if (queries_before_rope.defined() || projected_queries.defined())
        attn.stats.rotate = [this](const torch::Tensor& x, int64_t first) { return rope_.apply_heads(x, first); };
      if (request.stats.output_projection) attn.stats.output_projection = w.wo;
      if (request.stats.hidden_states) attn.stats.hidden_states = h;
      control.policy->observe(l, layer_cache, attn.stats, control.phase);
      if (control.compress) control.policy->compress(l, layer_cache, control.phase);
    }
    const torch::Tensor heads = attn.output.transpose(0, 1).reshape({T, H * hd});
    x = adapter ? x + with_lora(project(heads, w.wo), heads, adapter, l, LoraTarget::kO) : project_add(x, heads, w.wo);
    h = rms_norm(x, w.ffn_norm, config_.norm_eps);
    torch::Tensor gate_up = project(h, f.w_gate_up);
    const int64_t hidden = gate_up.size(1) / 2;
    torch::Tensor gate = gate_up.narrow(1, 0, hidden), up = gate_up.narrow(1, hidden, hidden);
    if (adapter) gate = with_lora(gate, h, adapter, l, LoraTarget::kGate), up = with_lora(up, h, adapter, l, LoraTarget::kUp);
    torch::Tensor act = torch::silu(gate);
    act.mul_(up);
    x = adapter ? x + with_lora(project(act, w.w_down), act, adapter, l, LoraTarget::kDown) : project_add(x, act, w.w_down);
  }
  if (!all_logits) x = x.narrow(0, T - 1, 1);
  x = rms_norm(x, weights_.final_norm, config_.norm_eps);
  return project(x, weights_.lm_head).to(torch::kFloat32);
}

void require_finite_logits(const Transformer& model, const torch::Tensor& logits) {
  // Summed in float64, float32 logits cannot overflow: the sum is finite exactly when each is,
  // and no mask of the [tokens, vocab] logits is made.
  if (std::isfinite(logits.sum(torch::kFloat64).item<double>())) return;
  const std::string& origin = model.config().origin;
  throw ModelLoadError(origin.empty() ? "the model" : origin,
                       "the forward pass gave non-finite logits (NaN or infinity): finite weights or config values "
                       "whose products overflow");
}

}  // namespace kvbench::models
