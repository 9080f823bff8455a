#include "models/hf_loader.hpp"

#include <filesystem>

#include "models/hf_config.hpp"
#include "models/hf_tensor_source.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace fs = std::filesystem;

// Only names the files (for checksums and `locate_model`): no safetensors header is read here.
std::vector<std::string> hf_weight_files(const std::string& dir) { return HfTensorSource(dir).files(); }

HfCheckpoint load_hf(const std::string& dir) {
  const fs::path root(dir);
  HfCheckpoint ck;
  ck.config = read_hf_config((root / "config.json").string());
  HfTensorSource source(dir);
  ModelWeights& w = ck.weights;
  w.embedding = source.get("model.embed_tokens.weight");
  w.final_norm = source.get("model.norm.weight");
  // Tied checkpoints usually omit lm_head; some store it anyway: the stored one wins.
  if (source.contains("lm_head.weight")) {
    w.lm_head = source.get("lm_head.weight");
  } else if (ck.config.tied_embeddings) {
    w.lm_head = w.embedding;
  } else {
    throw ModelLoadError(dir, "missing tensor 'lm_head.weight' (config.json says tie_word_embeddings is false)");
  }
  for (int64_t l = 0; l < ck.config.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    LayerWeights lw;
    lw.attn_norm = source.get(p + "input_layernorm.weight");
    lw.wq = source.get(p + "self_attn.q_proj.weight");
    lw.wk = source.get(p + "self_attn.k_proj.weight");
    lw.wv = source.get(p + "self_attn.v_proj.weight");
    lw.wo = source.get(p + "self_attn.o_proj.weight");
    if (ck.config.qk_norm) {
      lw.q_norm = source.get(p + "self_attn.q_norm.weight");
      lw.k_norm = source.get(p + "self_attn.k_norm.weight");
    }
    if (ck.config.qkv_bias) {
      lw.bq = source.get(p + "self_attn.q_proj.bias");
      lw.bk = source.get(p + "self_attn.k_proj.bias");
      lw.bv = source.get(p + "self_attn.v_proj.bias");
    }
    lw.ffn_norm = source.get(p + "post_attention_layernorm.weight");
    lw.w_gate = source.get(p + "mlp.gate_proj.weight");
    lw.w_up = source.get(p + "mlp.up_proj.weight");
    lw.w_down = source.get(p + "mlp.down_proj.weight");
    w.layers.push_back(lw);
  }
  source.require_all_read(ck.config.n_layers);
  return ck;
}

}  // namespace kvbench::models
