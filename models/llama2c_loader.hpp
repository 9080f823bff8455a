#pragma once
// karpathy/llama2.c legacy (v0) checkpoints: a header of 7 int32 — dim, hidden_dim, n_layers,
// n_heads, n_kv_heads, vocab_size (negative: an unshared classifier follows), seq_len — then
// float32 weights: token embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final, the
// unused rotary tables freq_cis_real/imag (skipped), and wcls when unshared. RoPE is llama2.c's
// interleaved-pairs convention.
#include <string>

#include "models/model_config.hpp"
#include "models/model_weights.hpp"

namespace kvbench::models {

struct Llama2cCheckpoint {
  ModelConfig config;
  ModelWeights weights;
};

// The header and the file size checked against it, without reading the weights: what locating a
// model needs to refuse a broken file before looking for its tokenizer. Throws as load_llama2c.
ModelConfig read_llama2c_config(const std::string& path);

// Throws ModelLoadError naming the file and the field for truncated files and impossible headers.
Llama2cCheckpoint load_llama2c(const std::string& path);

}  // namespace kvbench::models
