#pragma once
// The Llama-family decoder: embedding, RMSNorm, RoPE, GQA attention over a KV cache, SwiGLU MLP,
// tied or separate LM head. One forward consumes T new tokens and appends their K/V to the cache.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

#include "models/attention.hpp"
#include "models/attention_path.hpp"
#include "models/model_config.hpp"
#include "models/model_weights.hpp"
#include "models/rope.hpp"
#include "tensorio/peft_lora_adapter.hpp"
#include "policies/kv_cache.hpp"
#include "policies/policy.hpp"

namespace kvbench::models {

// How the eviction policy takes part in one forward: it observes every layer's attention and,
// when `compress` is set, evicts right after that layer's attention (the layer's output was
// computed with the uncompressed cache, as one-shot prefill compression requires).
struct CacheControl {
  policies::Policy* policy = nullptr;
  policies::Phase phase = policies::Phase::kPrefill;
  bool compress = false;
  // Attention statistics wanted beyond the policy's (e.g. by a fidelity task); may be null.
  std::function<void(int64_t layer, const policies::LayerCache&, const policies::AttentionStats&)> inspect;
  policies::StatsRequest inspect_wants;
  AttentionPath attention = AttentionPath::kAuto;
  // Sees every layer's queries (as given to attend()), new keys/values and attention output,
  // before the policy compresses: fidelity probes replay them on a shadow full cache.
  std::function<void(int64_t layer, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                     const torch::Tensor& positions, const torch::Tensor& output)>
      on_attention;
  // A one-token forward on CUDA replays its dense work as CUDA graphs (models/captured_pieces.hpp)
  // where nothing in it is asked for beyond the attention's statistics (no on_attention, no
  // projections, pre-RoPE queries or hidden states; not dynamic NTK). The same kernels: the same
  // logits. Elsewhere the same pieces run uncaptured (what the CPU tests check).
  bool decode_graphs = false;
};

class Transformer {
 public:
  Transformer(ModelConfig config, ModelWeights weights);

  const ModelConfig& config() const { return config_; }
  torch::Device device() const { return weights_.embedding.device(); }
  torch::ScalarType dtype() const { return weights_.embedding.scalar_type(); }
  int64_t parameter_count() const;
  const Rope& rope() const { return rope_; }
  // How many one-token forwards took the graphed pieces (CacheControl::decode_graphs) so far: a
  // step that asks for them and gets the plain forward is visible.
  int64_t graphed_steps() const;

  // An empty cache shaped for this model.
  policies::KVCache make_cache(policies::PositionMode mode) const;

  // tokens [T] at original positions first_position..first_position+T-1. Returns logits
  // [T, vocab] (float32) for every token, or only [1, vocab] for the last when !all_logits.
  torch::Tensor forward(const std::vector<int64_t>& tokens, int64_t first_position, policies::KVCache& cache,
                        const CacheControl& control, bool all_logits) const;
  // The same from input embeddings [T, dim] in place of the tokens' rows (transformers'
  // inputs_embeds; kvpress's RestoreKV feeds learned ones), with `adapter` (may be null) enabled on
  // every projection it targets. The policy sees no token ids (AttentionStats::tokens is null).
  torch::Tensor forward_embeddings(const torch::Tensor& embeddings, int64_t first_position, policies::KVCache& cache,
                                   const CacheControl& control, bool all_logits, const LoraAdapter* adapter) const;

 private:
  // The decoder layers and the head on the input rows x [T, dim]; `tokens` null for embeddings.
  torch::Tensor run_decoder(torch::Tensor x, const std::vector<int64_t>* tokens, int64_t first_position, policies::KVCache& cache,
                       const CacheControl& control, bool all_logits, const LoraAdapter* adapter) const;
  // Throws ModelLoadError naming the adapter's tensor whose shape does not fit its projection.
  void check_lora_shapes(const LoraAdapter& adapter) const;

  // A layer's work before its attention on the rows x [T, dim]: the normed input h, the queries
  // [H, T, hd] and new keys and values [kvh, T, hd] (q and k rotated by `rotate` when set), and
  // the extras `wants` asks for.
  struct AttentionInputs {
    torch::Tensor h, q, k, v, projected_queries, projected_keys, queries_before_rope;
  };
  using Rotation = std::function<torch::Tensor(const torch::Tensor&)>;
  AttentionInputs attention_inputs(int64_t layer, const torch::Tensor& x, const Rotation& rotate,
                                   const policies::StatsRequest& wants, const LoraAdapter* adapter) const;
  // What one forward's attentions share: the cache, the policy's part, the statistics asked.
  struct ForwardContext {
    policies::KVCache& cache;
    const CacheControl& control;
    const AttentionRequest& request;
    bool observing;  // the policy observes (and may compress) this forward
    const std::vector<int64_t>* tokens;
    int64_t position_end;  // one past the forward's last position
  };
  // Appends the layer's new keys and values, attends, and lets the hooks and the policy see it
  // (the policy may compress the layer). Returns the attention output [H, T, hd].
  torch::Tensor attend_layer(int64_t layer, const AttentionInputs& in, const torch::Tensor& positions,
                             const ForwardContext& forward) const;
  // x + the layer's output projection of `attention` [H, T, hd], then its MLP with its residual.
  torch::Tensor after_attention(int64_t layer, const torch::Tensor& x, const torch::Tensor& attention,
                                const LoraAdapter* adapter) const;
  // The final norm and the LM head: [T, vocab] float32, or [1, vocab] for the last row.
  torch::Tensor head(torch::Tensor x, bool all_logits) const;

  // `forward` (one token) as CUDA graphs (CacheControl::decode_graphs); an undefined tensor when
  // another forward holds the graphs (the caller then runs the plain forward).
  struct DecodeGraphs;
  torch::Tensor graphed_step(const ForwardContext& forward) const;
  // (Re)captures the pieces for a step at `position` with `rotate_now` (kOriginal positions).
  void capture_decode_graphs(DecodeGraphs& graphs, int64_t position, bool rotate_now) const;

  struct FusedLayer {
    torch::Tensor wqkv;       // [(n_heads + 2·n_kv_heads)·head_dim, dim]
    torch::Tensor bqkv;       // qwen2 only
    torch::Tensor w_gate_up;  // [2·hidden_dim, dim]
  };

  ModelConfig config_;
  ModelWeights weights_;
  std::vector<FusedLayer> fused_;
  Rope rope_;
  std::shared_ptr<DecodeGraphs> decode_graphs_;  // made with the model; the first graphed step captures its pieces
};

// Throws ModelLoadError naming the model (config.origin) when `logits` hold NaN or infinity:
// finite weights or config values whose products overflow. Call it where logits are read back
// anyway (perplexity, sampling): on a device it waits for the device.
void require_finite_logits(const Transformer& model, const torch::Tensor& logits);

}  // namespace kvbench::models
