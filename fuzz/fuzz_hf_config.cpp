// Hugging Face config.json -> ModelConfig (every field, rope_scaling/rope_parameters variants).
// fuzz-sources: models/hf_config.cpp tokenizers/model_json.cpp datasets/json_parse.cpp datasets/regular_file.cpp
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/hf_config.hpp"
#include "tokenizers/model_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const kvbench::models::ModelConfig c =
        kvbench::models::parse_hf_config(std::string(reinterpret_cast<const char*>(data), size), "config.json");
    // What the loader relies on once the config is accepted.
    if (c.dim < 1 || c.n_heads < 1 || c.n_kv_heads < 1 || c.head_dim < 1 || c.vocab_size < 1 || c.n_layers < 1 ||
        c.n_heads % c.n_kv_heads != 0 || c.head_dim % 2 != 0 || !(c.norm_eps > 0) || !(c.rope_theta > 0))
      __builtin_trap();
  } catch (const kvbench::models::ModelLoadError&) {
  }
  return 0;
}
