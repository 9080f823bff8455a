#pragma once
// Hugging Face config.json for the Llama family (model_type llama, mistral, qwen2, qwen3) -> ModelConfig.
// Fields that define tensor shapes are required; the others take the transformers class defaults
// of their model_type. Both the transformers 4.x spelling (rope_theta, rope_scaling{type|rope_type},
// torch_dtype) and the 5.x one (rope_parameters{rope_type, rope_theta, ...}, dtype) are read.
#include <string>

#include "models/model_config.hpp"

namespace kvbench::models {

// Throws ModelLoadError naming config.json, the line (where the field is present) and the field.
ModelConfig read_hf_config(const std::string& config_json_path);
// The same from config.json's text (`path` names it in errors).
ModelConfig parse_hf_config(const std::string& text, const std::string& path);

}  // namespace kvbench::models
