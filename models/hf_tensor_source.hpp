#pragma once
// The tensors of a Hugging Face checkpoint directory: model.safetensors, else the shards that
// model.safetensors.index.json's weight_map names (transformers' order). It remembers which tensors were read, so a
// checkpoint holding tensors the config does not use (an extra layer, a bias kvbench does not
// apply) is refused instead of running as a different model.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tensorio/safetensors.hpp"

namespace kvbench::models {

class HfTensorSource {
 public:
  // Reads the index when there is one; opens no safetensors file yet.
  explicit HfTensorSource(const std::string& dir);

  // The weight files: the single file, or every shard the index names.
  std::vector<std::string> files() const;
  bool contains(const std::string& name);
  // A floating-point tensor in its stored dtype; throws ModelLoadError naming the file (the index
  // when it has no entry for `name`) and the tensor.
  torch::Tensor get(const std::string& name);
  // Throws ModelLoadError listing every stored tensor no get() asked for, except those real
  // checkpoints carry and transformers skips too (rotary inv_freq buffers).
  void require_all_read(int64_t n_layers);

 private:
  SafetensorsFile& open(const std::string& path);
  bool indexed() const { return !index_path_.empty(); }

  std::string index_path_;   // model.safetensors.index.json, or empty
  std::string single_path_;  // model.safetensors when there is no index
  std::map<std::string, std::string> location_;  // name -> shard, from the index
  std::map<std::string, SafetensorsFile> open_;
  std::set<std::string> read_;
};

}  // namespace kvbench::models
