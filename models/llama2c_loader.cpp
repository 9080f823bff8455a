#include "models/llama2c_loader.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "datasets/regular_file.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace {

constexpr int64_t kMaxDim = int64_t{1} << 20;

void check_field(const std::string& path, const char* field, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high)
    throw ModelLoadError(path, std::string("impossible header: ") + field + " = " + std::to_string(value) +
                                   " (expected " + std::to_string(low) + ".." + std::to_string(high) + ")");
}

}  // namespace

ModelConfig read_llama2c_config(const std::string& path) {
  const std::string kind = datasets::non_regular_kind(path);
  if (!kind.empty()) throw ModelLoadError(path, "a llama2.c checkpoint must be a regular file, this is " + kind);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelLoadError(path, "cannot open checkpoint");
  const auto file_size = static_cast<int64_t>(std::filesystem::file_size(path));
  int32_t header[7] = {};
  if (file_size < static_cast<int64_t>(sizeof(header)) || !in.read(reinterpret_cast<char*>(header), sizeof(header)))
    throw ModelLoadError(path, "truncated: shorter than the 28-byte llama2.c header");
  uint32_t magic;
  std::memcpy(&magic, header, 4);
  if (magic == 0x616b3432)
    throw ModelLoadError(path, "a llama2.c v1/v2 export (magic 'ak42', e.g. Q8_0); only the legacy float32 format is read");

  ModelConfig c;
  c.source_format = "llama2c";
  c.dim = header[0];
  c.hidden_dim = header[1];
  c.n_layers = header[2];
  c.n_heads = header[3];
  c.n_kv_heads = header[4];
  const bool shared = header[5] > 0;
  c.vocab_size = std::abs(static_cast<int64_t>(header[5]));
  c.max_seq_len = header[6];
  check_field(path, "dim", c.dim, 1, kMaxDim);
  check_field(path, "hidden_dim", c.hidden_dim, 1, kMaxDim);
  check_field(path, "n_layers", c.n_layers, 1, 4096);
  check_field(path, "n_heads", c.n_heads, 1, 4096);
  check_field(path, "n_kv_heads", c.n_kv_heads, 1, c.n_heads);
  check_field(path, "vocab_size", c.vocab_size, 1, kMaxDim * 4);
  check_field(path, "seq_len", c.max_seq_len, 1, kMaxDim * 16);
  if (c.dim % c.n_heads != 0) throw ModelLoadError(path, "impossible header: dim is not a multiple of n_heads");
  if (c.n_heads % c.n_kv_heads != 0) throw ModelLoadError(path, "impossible header: n_heads is not a multiple of n_kv_heads");
  c.head_dim = c.dim / c.n_heads;
  if (c.head_dim % 2 != 0) throw ModelLoadError(path, "impossible header: head size must be even for RoPE");
  c.rope_style = RopeStyle::kInterleaved;
  c.tied_embeddings = shared;
  c.dtype = "float32";

  const int64_t L = c.n_layers, d = c.dim, kv = c.n_kv_heads * c.head_dim, h = c.hidden_dim, V = c.vocab_size;
  const int64_t rope_tables = c.max_seq_len * c.head_dim;  // real + imag, each seq_len * head_dim/2
  const int64_t floats = V * d + L * d + L * d * d + 2 * L * kv * d + L * d * d + L * d + 3 * L * h * d + d +
                         rope_tables + (shared ? 0 : V * d);
  const int64_t expected = 28 + 4 * floats;
  if (file_size < expected)
    throw ModelLoadError(path, "truncated: " + std::to_string(file_size) + " bytes, the header implies " +
                                   std::to_string(expected));
  if (file_size > expected)
    throw ModelLoadError(path, "header does not match the file: " + std::to_string(file_size) +
                                   " bytes, the header implies " + std::to_string(expected));
  return c;
}

Llama2cCheckpoint load_llama2c(const std::string& path) {
  const ModelConfig c = read_llama2c_config(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelLoadError(path, "cannot open checkpoint");
  in.seekg(28);
  const bool shared = c.tied_embeddings;
  const int64_t L = c.n_layers, d = c.dim, kv = c.n_kv_heads * c.head_dim, h = c.hidden_dim, V = c.vocab_size;
  const int64_t rope_tables = c.max_seq_len * c.head_dim;

  auto read = [&](std::vector<int64_t> shape) {
    torch::Tensor t = torch::empty(shape, torch::kFloat32);
    in.read(reinterpret_cast<char*>(t.data_ptr<float>()), static_cast<std::streamsize>(t.numel() * 4));
    if (!in) throw ModelLoadError(path, "truncated while reading weights");
    return t;
  };
  Llama2cCheckpoint ck;
  ck.config = c;
  ModelWeights& w = ck.weights;
  w.embedding = read({V, d});
  torch::Tensor rms_att = read({L, d}), wq = read({L, d, d}), wk = read({L, kv, d}), wv = read({L, kv, d}),
                wo = read({L, d, d}), rms_ffn = read({L, d}), w1 = read({L, h, d}), w2 = read({L, d, h}),
                w3 = read({L, h, d});
  w.final_norm = read({d});
  in.seekg(rope_tables * 4, std::ios::cur);
  w.lm_head = shared ? w.embedding : read({V, d});
  for (int64_t l = 0; l < L; ++l) {
    LayerWeights lw;
    lw.attn_norm = rms_att[l];
    lw.wq = wq[l];
    lw.wk = wk[l];
    lw.wv = wv[l];
    lw.wo = wo[l];
    lw.ffn_norm = rms_ffn[l];
    lw.w_gate = w1[l];
    lw.w_down = w2[l];
    lw.w_up = w3[l];
    w.layers.push_back(lw);
  }
  return ck;
}

}  // namespace kvbench::models
