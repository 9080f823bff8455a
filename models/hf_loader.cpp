#include "models/hf_loader.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "datasets/json_parse.hpp"
#include "models/hf_config.hpp"
#include "models/model_error.hpp"
#include "models/safetensors.hpp"

namespace kvbench::models {
namespace fs = std::filesystem;

namespace {

// name -> shard file, from model.safetensors.index.json's weight_map.
std::map<std::string, std::string> read_index(const fs::path& index_path) {
  nlohmann::json index;
  try {
    index = datasets::read_json_file(index_path.string());
  } catch (const std::runtime_error& e) {
    throw ModelLoadError(index_path.string(), std::string("cannot read the shard index: ") + e.what());
  }
  if (!index.is_object()) throw ModelLoadError(index_path.string(), "must be a JSON object with a 'weight_map'");
  if (!index.contains("weight_map")) throw ModelLoadError(index_path.string(), "missing field 'weight_map'");
  if (!index["weight_map"].is_object())
    throw ModelLoadError(index_path.string(), "field 'weight_map' must be an object {tensor name: shard file}, got " +
                                                  std::string(index["weight_map"].type_name()));
  std::map<std::string, std::string> map;
  for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
    if (!it->is_string()) throw ModelLoadError(index_path.string(), "weight_map['" + it.key() + "'] must be a file name");
    map[it.key()] = (index_path.parent_path() / it->get<std::string>()).string();
  }
  return map;
}

class TensorSource {
 public:
  explicit TensorSource(const fs::path& dir) {
    const fs::path single = dir / "model.safetensors", index = dir / "model.safetensors.index.json";
    if (fs::exists(index)) {
      location_ = read_index(index);
    } else if (fs::exists(single)) {
      SafetensorsFile& file = open(single.string());
      for (const auto& name : file.names()) location_[name] = single.string();
    } else {
      throw ModelLoadError(dir.string(), "no model.safetensors or model.safetensors.index.json in this directory");
    }
  }

  std::vector<std::string> files() const {
    std::set<std::string> unique;
    for (const auto& [name, file] : location_) unique.insert(file);
    return {unique.begin(), unique.end()};
  }

  bool contains(const std::string& name) const { return location_.count(name) > 0; }

  torch::Tensor get(const std::string& name) {
    auto it = location_.find(name);
    if (it == location_.end()) throw ModelLoadError(origin(), "missing tensor '" + name + "'");
    SafetensorsFile& file = open(it->second);
    if (!file.contains(name))
      throw ModelLoadError(it->second, "missing tensor '" + name + "' (the index places it in this shard)");
    return file.tensor(name);
  }

 private:
  SafetensorsFile& open(const std::string& path) {
    auto it = open_.find(path);
    if (it == open_.end()) it = open_.emplace(path, SafetensorsFile::open(path)).first;
    return it->second;
  }
  std::string origin() const { return files().empty() ? "" : files().front(); }

  std::map<std::string, std::string> location_;
  std::map<std::string, SafetensorsFile> open_;
};

}  // namespace

// Only names the files (for checksums and `locate_model`): no safetensors header is read here.
std::vector<std::string> hf_weight_files(const std::string& dir) {
  const fs::path root(dir), single = root / "model.safetensors", index = root / "model.safetensors.index.json";
  if (fs::exists(index)) {
    std::set<std::string> unique;
    for (const auto& [name, file] : read_index(index)) unique.insert(file);
    return {unique.begin(), unique.end()};
  }
  if (fs::exists(single)) return {single.string()};
  throw ModelLoadError(dir, "no model.safetensors or model.safetensors.index.json in this directory");
}

HfCheckpoint load_hf(const std::string& dir) {
  const fs::path root(dir);
  HfCheckpoint ck;
  ck.config = read_hf_config((root / "config.json").string());
  TensorSource source(root);
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
  return ck;
}

}  // namespace kvbench::models
