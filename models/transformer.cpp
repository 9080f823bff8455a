#include "models/transformer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>

#include "models/attention.hpp"
#include "models/captured_pieces.hpp"
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

// The step's inputs live in buffers the graphs read: the token and its position ([1] int64 on the
// device, filled before each step), each layer's attention output (copied in after the layer's
// attention). Piece 0 is the embedding and layer 0's attention inputs; piece l+1 is layer l after
// its attention and layer l+1's inputs (the last: the head's logits).
struct Transformer::DecodeGraphs {
  std::mutex mutex;
  std::unique_ptr<CapturedPieces> pieces;
  torch::Tensor token, position;
  std::vector<torch::Tensor> attention;
  // Held: the graphs read it where it lay at capture. Undefined when the pieces do not rotate
  // (kCacheSlot positions rotate keys at read time).
  Rope::Table table;
  const Transformer* owner = nullptr;  // the pieces call it: a copy of the model captures its own
  std::atomic<int64_t> steps{0};
};

// q, k and v (and gate and up) are one matrix each, so a layer runs two input projections instead
// of five; the separate weights become views into them (no second copy is kept).
Transformer::Transformer(ModelConfig config, ModelWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)), rope_(config_), decode_graphs_(std::make_shared<DecodeGraphs>()) {
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

int64_t Transformer::graphed_steps() const { return decode_graphs_->steps; }

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
  const ForwardContext context{cache, control, request, observing, tokens, first_position + T};

  const policies::StatsRequest& wants = request.stats;
  if (T == 1 && control.decode_graphs && tokens && !adapter && !control.on_attention && !wants.projections &&
      !wants.queries_before_rope && !wants.hidden_states && (!rotate_now || rope_.has_table()) && !all_logits) {
    torch::Tensor logits = graphed_step(context);
    if (logits.defined()) return logits;
  }
  // Positions are made on the device (token ids go there without waiting for it, below).
  const torch::Tensor positions =
      torch::arange(first_position, first_position + T, torch::TensorOptions().dtype(torch::kInt64).device(device()));
  Rotation rotate;
  if (rotate_now) rotate = [&](const torch::Tensor& qk) { return rope_.apply_tokens(qk, first_position); };
  for (int64_t l = 0; l < config_.n_layers; ++l) {
    torch::Tensor attention;
    {  // the layer's q/k/v and normed input are freed before its MLP's activations are made
      const AttentionInputs in = attention_inputs(l, x, rotate, wants, adapter);
      attention = attend_layer(l, in, positions, context);
    }
    x = after_attention(l, x, attention, adapter);
  }
  return head(x, all_logits);
}

Transformer::AttentionInputs Transformer::attention_inputs(int64_t l, const torch::Tensor& x, const Rotation& rotate,
                                                           const policies::StatsRequest& wants, const LoraAdapter* adapter) const {
  const int64_t T = x.size(0);
  const int64_t H = config_.n_heads, kvh = config_.n_kv_heads, hd = config_.head_dim;
  const LayerWeights& w = weights_.layers[l];
  const FusedLayer& f = fused_[l];
  AttentionInputs in;
  in.h = rms_norm(x, w.attn_norm, config_.norm_eps);
  torch::Tensor qkv = project(in.h, f.wqkv, f.bqkv);
  if (adapter) {
    const int64_t q_rows = H * hd, kv_rows = kvh * hd;
    qkv = torch::cat({with_lora(qkv.narrow(1, 0, q_rows), in.h, adapter, l, LoraTarget::kQ),
                      with_lora(qkv.narrow(1, q_rows, kv_rows), in.h, adapter, l, LoraTarget::kK),
                      with_lora(qkv.narrow(1, q_rows + kv_rows, kv_rows), in.h, adapter, l, LoraTarget::kV)}, 1);
  }
  qkv = qkv.view({T, H + 2 * kvh, hd});
  // q and k rotate together (token-major [T, heads, hd]); kCacheSlot rotates at read time.
  torch::Tensor qk = qkv.narrow(1, 0, H + kvh);
  if (wants.projections) {
    in.projected_queries = qk.narrow(1, 0, H).transpose(0, 1).to(torch::kFloat32);
    in.projected_keys = qk.narrow(1, H, kvh).transpose(0, 1).to(torch::kFloat32);
  }
  if (w.q_norm.defined()) {  // qwen3: each head's q and k RMS-normalised over head_dim, before RoPE
    qk = torch::cat({rms_norm(qk.narrow(1, 0, H), w.q_norm, config_.norm_eps),
                     rms_norm(qk.narrow(1, H, kvh), w.k_norm, config_.norm_eps)}, 1);
  }
  if (wants.queries_before_rope) in.queries_before_rope = qk.narrow(1, 0, H).transpose(0, 1).to(torch::kFloat32);
  if (rotate) qk = rotate(qk);
  in.q = qk.narrow(1, 0, H).transpose(0, 1);   // [H, T, hd]
  in.k = qk.narrow(1, H, kvh).transpose(0, 1);  // [kvh, T, hd]
  in.v = qkv.narrow(1, H + kvh, kvh).transpose(0, 1);
  return in;
}

torch::Tensor Transformer::attend_layer(int64_t l, const AttentionInputs& in, const torch::Tensor& positions,
                                        const ForwardContext& forward) const {
  const CacheControl& control = forward.control;
  const AttentionRequest& request = forward.request;
  policies::LayerCache& layer_cache = forward.cache.layer(l);
  policies::append_model_heads(layer_cache, in.k, in.v, positions);  // repeats for gqa: repeat
  AttentionResult attn = attend(in.q, layer_cache, rope_, request);
  if (control.inspect) control.inspect(l, layer_cache, attn.stats);
  if (control.on_attention) control.on_attention(l, in.q, in.k, in.v, positions, attn.output);
  if (forward.observing) {
    attn.stats.position_end = forward.position_end;
    attn.stats.tokens = forward.tokens;
    if (in.queries_before_rope.defined()) attn.stats.queries_before_rope = in.queries_before_rope;
    if (in.projected_queries.defined()) attn.stats.projected_queries = in.projected_queries, attn.stats.projected_keys = in.projected_keys;
    if (in.queries_before_rope.defined() || in.projected_queries.defined())
      attn.stats.rotate = [this](const torch::Tensor& x, int64_t first) { return rope_.apply_heads(x, first); };
    if (request.stats.output_projection) attn.stats.output_projection = weights_.layers[l].wo;
    if (request.stats.hidden_states) attn.stats.hidden_states = in.h;
    control.policy->observe(l, layer_cache, attn.stats, control.phase);
    if (control.compress) control.policy->compress(l, layer_cache, control.phase);
  }
  return attn.output;
}

torch::Tensor Transformer::after_attention(int64_t l, const torch::Tensor& x, const torch::Tensor& attention,
                                           const LoraAdapter* adapter) const {
  const LayerWeights& w = weights_.layers[l];
  const int64_t T = x.size(0);
  const torch::Tensor heads = attention.transpose(0, 1).reshape({T, config_.n_heads * config_.head_dim});
  torch::Tensor out = adapter ? x + with_lora(project(heads, w.wo), heads, adapter, l, LoraTarget::kO) : project_add(x, heads, w.wo);
  const torch::Tensor h = rms_norm(out, w.ffn_norm, config_.norm_eps);
  const torch::Tensor gate_up = project(h, fused_[l].w_gate_up);
  const int64_t hidden = gate_up.size(1) / 2;
  torch::Tensor gate = gate_up.narrow(1, 0, hidden), up = gate_up.narrow(1, hidden, hidden);
  if (adapter) gate = with_lora(gate, h, adapter, l, LoraTarget::kGate), up = with_lora(up, h, adapter, l, LoraTarget::kUp);
  torch::Tensor act = torch::silu(gate);
  act.mul_(up);
  return adapter ? out + with_lora(project(act, w.w_down), act, adapter, l, LoraTarget::kDown) : project_add(out, act, w.w_down);
}

torch::Tensor Transformer::head(torch::Tensor x, bool all_logits) const {
  if (!all_logits) x = x.narrow(0, x.size(0) - 1, 1);
  x = rms_norm(x, weights_.final_norm, config_.norm_eps);
  return project(x, weights_.lm_head).to(torch::kFloat32);
}

void Transformer::capture_decode_graphs(DecodeGraphs& g, int64_t position, bool rotate_now) const {
  const torch::TensorOptions ids = torch::TensorOptions().dtype(torch::kInt64).device(device());
  g.pieces.reset();  // frees the old graphs before the new ones take memory
  g.token = torch::zeros({1}, ids);
  g.position = torch::full({1}, position, ids);
  g.attention.clear();
  for (int64_t l = 0; l < config_.n_layers; ++l)
    g.attention.push_back(torch::zeros({config_.n_heads, 1, config_.head_dim}, torch::TensorOptions().dtype(dtype()).device(device())));
  g.owner = this;
  g.table = rotate_now ? rope_.table(device(), position + 1) : Rope::Table{};
  Rotation rotate;
  if (rotate_now) rotate = [this, &g](const torch::Tensor& qk) { return rope_.apply_tokens_at(qk, g.position, g.table); };
  auto inputs_of = [this, rotate](int64_t l, const torch::Tensor& x) {
    const AttentionInputs in = attention_inputs(l, x, rotate, {}, nullptr);
    return std::vector<torch::Tensor>{x, in.q, in.k, in.v};
  };
  g.pieces = std::make_unique<CapturedPieces>(device());
  g.pieces->add([this, &g, inputs_of] { return inputs_of(0, weights_.embedding.index_select(0, g.token)); });
  for (int64_t l = 0; l < config_.n_layers; ++l) {
    g.pieces->add([this, &g, inputs_of, l] {
      const torch::Tensor x = after_attention(l, g.pieces->outputs(l)[0], g.attention[l], nullptr);
      if (l + 1 < config_.n_layers) return inputs_of(l + 1, x);
      return std::vector<torch::Tensor>{head(x, false)};
    });
  }
}

torch::Tensor Transformer::graphed_step(const ForwardContext& forward) const {
  const int64_t token = (*forward.tokens)[0], position = forward.position_end - 1;
  DecodeGraphs& g = *decode_graphs_;
  std::unique_lock<std::mutex> lock(g.mutex, std::try_to_lock);
  if (!lock.owns_lock()) return {};
  const bool rotate_now = forward.request.mode == policies::PositionMode::kOriginal;
  const bool rotates = g.table.first.defined();
  if (!g.pieces || g.owner != this || rotates != rotate_now || (rotate_now && position >= g.table.first.size(0)))
    capture_decode_graphs(g, position, rotate_now);
  ++g.steps;
  g.token.fill_(token);
  g.position.fill_(position);
  AttentionInputs in;
  for (int64_t l = 0; l < config_.n_layers; ++l) {
    const std::vector<torch::Tensor>& piece = g.pieces->run(l);
    in.q = piece[1], in.k = piece[2], in.v = piece[3];
    g.attention[l].copy_(attend_layer(l, in, g.position, forward));
  }
  // A copy: the next step's replay rewrites the captured logits.
  return g.pieces->run(config_.n_layers)[0].clone();
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
