#include "models/model_weights.hpp"

#include <sstream>

#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace {

std::string shape_of(const torch::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

void expect(const std::string& origin, const std::string& name, const torch::Tensor& t, std::vector<int64_t> shape) {
  if (!t.defined()) throw ModelLoadError(origin, "missing tensor '" + name + "'");
  // Integer or bool bytes taken as weights give nonsense numbers (perplexity inf), not an error.
  if (!t.is_floating_point())
    throw ModelLoadError(origin, "tensor '" + name + "' has dtype " + c10::toString(t.scalar_type()) +
                                     "; model weights must be floating point");
  if (t.sizes().vec() != shape) {
    std::ostringstream want;
    want << c10::IntArrayRef(shape);
    throw ModelLoadError(origin, "tensor '" + name + "' has shape " + shape_of(t) + ", the config implies " + want.str());
  }
}

// Row blocks that the transformer multiplies as one matrix (q/k/v, gate/up) are copied straight
// into one buffer on the device and become views of it: moving them one by one and concatenating
// there would hold both copies at once (9 GB more for an 8B model, kept by the CUDA allocator).
void place_stacked(std::vector<torch::Tensor*> parts, torch::Device device, torch::ScalarType dtype) {
  int64_t rows = 0;
  for (const torch::Tensor* p : parts) rows += p->size(0);
  torch::Tensor buffer = torch::empty({rows, parts[0]->size(1)}, torch::TensorOptions().dtype(dtype).device(device));
  int64_t at = 0;
  for (torch::Tensor* p : parts) {
    torch::Tensor block = buffer.narrow(0, at, p->size(0));
    block.copy_(*p);
    at += p->size(0);
    *p = block;
  }
}

}  // namespace

void validate_weights(const ModelConfig& c, const ModelWeights& w, const std::string& origin) {
  const int64_t d = c.dim, q = c.n_heads * c.head_dim, kv = c.n_kv_heads * c.head_dim, h = c.hidden_dim;
  expect(origin, "embedding", w.embedding, {c.vocab_size, d});
  expect(origin, "final_norm", w.final_norm, {d});
  expect(origin, "lm_head", w.lm_head, {c.vocab_size, d});
  if (static_cast<int64_t>(w.layers.size()) != c.n_layers)
    throw ModelLoadError(origin, "has " + std::to_string(w.layers.size()) + " layers, the config says " +
                                     std::to_string(c.n_layers));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    const std::string p = "layers." + std::to_string(l) + ".";
    expect(origin, p + "attn_norm", lw.attn_norm, {d});
    expect(origin, p + "wq", lw.wq, {q, d});
    expect(origin, p + "wk", lw.wk, {kv, d});
    expect(origin, p + "wv", lw.wv, {kv, d});
    expect(origin, p + "wo", lw.wo, {d, q});
    expect(origin, p + "ffn_norm", lw.ffn_norm, {d});
    expect(origin, p + "w_gate", lw.w_gate, {h, d});
    expect(origin, p + "w_down", lw.w_down, {d, h});
    expect(origin, p + "w_up", lw.w_up, {h, d});
    if (c.qk_norm) {
      expect(origin, p + "q_norm", lw.q_norm, {c.head_dim});
      expect(origin, p + "k_norm", lw.k_norm, {c.head_dim});
    }
    if (c.qkv_bias) {
      expect(origin, p + "bq", lw.bq, {q});
      expect(origin, p + "bk", lw.bk, {kv});
      expect(origin, p + "bv", lw.bv, {kv});
    }
  }
}

ModelWeights to_device(const ModelWeights& w, torch::Device device, torch::ScalarType dtype) {
  auto move = [&](const torch::Tensor& t) { return t.defined() ? t.to(device, dtype).contiguous() : t; };
  ModelWeights out;
  out.embedding = move(w.embedding);
  out.final_norm = move(w.final_norm);
  // A tied head stays one tensor on the device.
  out.lm_head = w.lm_head.is_same(w.embedding) ? out.embedding : move(w.lm_head);
  for (const LayerWeights& l : w.layers) {
    LayerWeights m;
    m.attn_norm = move(l.attn_norm);
    m.wq = l.wq;
    m.wk = l.wk;
    m.wv = l.wv;
    place_stacked({&m.wq, &m.wk, &m.wv}, device, dtype);
    m.wo = move(l.wo);
    m.bq = move(l.bq);
    m.bk = move(l.bk);
    m.bv = move(l.bv);
    m.q_norm = move(l.q_norm);
    m.k_norm = move(l.k_norm);
    m.ffn_norm = move(l.ffn_norm);
    m.w_gate = l.w_gate;
    m.w_up = l.w_up;
    place_stacked({&m.w_gate, &m.w_up}, device, dtype);
    m.w_down = move(l.w_down);
    out.layers.push_back(m);
  }
  return out;
}

}  // namespace kvbench::models
