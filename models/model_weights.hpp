#pragma once
// Weights of a Llama-family transformer, in the layout nn.Linear uses: [out_features, in_features].
#include <torch/torch.h>

#include <vector>

#include "models/model_config.hpp"

namespace kvbench::models {

struct LayerWeights {
  torch::Tensor attn_norm;   // [dim]
  torch::Tensor wq;          // [n_heads*head_dim, dim]
  torch::Tensor wk;          // [n_kv_heads*head_dim, dim]
  torch::Tensor wv;          // [n_kv_heads*head_dim, dim]
  torch::Tensor wo;          // [dim, n_heads*head_dim]
  torch::Tensor bq, bk, bv;  // qwen2 only; undefined otherwise
  torch::Tensor q_norm, k_norm;  // [head_dim], qwen3 only; undefined otherwise
  torch::Tensor ffn_norm;    // [dim]
  torch::Tensor w_gate;      // [hidden_dim, dim]  (llama2.c w1)
  torch::Tensor w_down;      // [dim, hidden_dim]  (llama2.c w2)
  torch::Tensor w_up;        // [hidden_dim, dim]  (llama2.c w3)
};

struct ModelWeights {
  torch::Tensor embedding;   // [vocab, dim]
  std::vector<LayerWeights> layers;
  torch::Tensor final_norm;  // [dim]
  torch::Tensor lm_head;     // [vocab, dim]; the embedding itself when tied
};

// Checks every tensor's presence, floating-point dtype and shape against the config; throws
// ModelLoadError naming the tensor (and both shapes).
void validate_weights(const ModelConfig& config, const ModelWeights& weights, const std::string& origin);

// Moves/converts every tensor (e.g. to CUDA bf16). q/k/v and gate/up become consecutive row blocks
// of one buffer each, which the transformer multiplies as one matrix without a second copy.
ModelWeights to_device(const ModelWeights& weights, torch::Device device, torch::ScalarType dtype);

}  // namespace kvbench::models
