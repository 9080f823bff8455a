#pragma once
// The architecture of a Llama-family checkpoint, whatever format it came from.
#include <cstdint>
#include <string>

namespace kvbench::models {

// llama2.c rotates interleaved pairs (x0,x1),(x2,x3)…; Hugging Face rotates the two halves
// (x_i, x_{i+d/2}). The same trained model needs q/k rows permuted between the two, so every
// checkpoint records which one its weights expect.
enum class RopeStyle { kInterleaved, kHalfSplit };

enum class RopeScalingType { kNone, kLinear, kDynamicNtk, kLlama3 };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::kNone;
  double factor = 1.0;
  // llama3 only.
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

struct ModelConfig {
  std::string architecture = "llama";  // llama | mistral | qwen2 | qwen3
  std::string source_format;           // llama2c | hf
  int64_t dim = 0;                     // hidden size
  int64_t hidden_dim = 0;              // MLP intermediate size
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t vocab_size = 0;
  int64_t max_seq_len = 0;             // trained context length
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  RopeStyle rope_style = RopeStyle::kInterleaved;
  bool tied_embeddings = true;
  bool qkv_bias = false;               // qwen2
  bool qk_norm = false;                // qwen3: RMSNorm of each head's q and k (before RoPE)
  int64_t sliding_window = 0;          // 0 = none; recorded, not enforced (Mistral v0.1)
  std::string dtype = "float32";       // storage dtype of the checkpoint
  std::string origin;                  // the checkpoint's file or directory, named by run-time errors

  int64_t group_size() const { return n_heads / n_kv_heads; }
};

const char* to_string(RopeStyle style);
const char* to_string(RopeScalingType type);

}  // namespace kvbench::models
