#pragma once
// One entry point for every checkpoint format kvbench reads.
#include <string>
#include <vector>

#include "models/model_config.hpp"
#include "models/model_weights.hpp"

namespace kvbench::models {

struct LoadedModel {
  ModelConfig config;
  ModelWeights weights;           // empty when only located; in the stored dtype (to_device converts)
  std::string format;             // "llama2c" | "hf"
  std::string name;               // e.g. "stories260K"
  std::string weights_path;       // the .bin, or the HF directory
  std::vector<std::string> weight_files;  // every file whose bytes define the weights
  std::string tokenizer_path;
};

// `path` is: the alias "stories260K" (../shared/models/stories260K); a Hugging Face directory
// (config.json + safetensors; tokenizer: `tokenizer` (a file or directory), else tokenizer.json,
// else tokenizer.model beside it); a llama2.c .bin (tokenizer: `tokenizer`, else the single .model
// beside it); or a directory holding one llama2.c .bin and one .model.
LoadedModel load_model(const std::string& path, const std::string& tokenizer = "");
// The same resolution without reading the weights (for checksums and `info`).
LoadedModel locate_model(const std::string& path, const std::string& tokenizer = "");

}  // namespace kvbench::models
