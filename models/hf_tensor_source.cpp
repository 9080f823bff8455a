#include "models/hf_tensor_source.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "datasets/json_parse.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace fs = std::filesystem;

namespace {

bool has_control_character(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// A shard must lie inside the model directory: "../other/model.safetensors" or an absolute path
// would load (and checksum) some other checkpoint's bytes under this model's name. A control
// character is refused too: the system reads a name only up to a NUL ("a.safetensors\0.x" opens
// a.safetensors), and a newline would split the error naming it.
void require_inside_model_dir(const fs::path& index_path, const std::string& tensor, const std::string& file) {
  if (has_control_character(tensor))
    throw ModelLoadError(index_path.string(),
                         "weight_map: the tensor name " + nlohmann::json(tensor).dump() + " holds a control character");
  if (has_control_character(file))
    throw ModelLoadError(index_path.string(), "weight_map['" + tensor + "']: the shard name " +
                                                  nlohmann::json(file).dump() + " holds a control character");
  const fs::path rel(file);
  bool escapes = rel.empty() || rel.has_root_path();
  for (const auto& part : rel) escapes |= part == "..";
  if (escapes)
    throw ModelLoadError(index_path.string(), "weight_map['" + tensor + "'] is \"" + file +
                                                  "\": a shard must be a file in the model directory (a relative "
                                                  "path without '..')");
}

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
    require_inside_model_dir(index_path, it.key(), it->get<std::string>());
    map[it.key()] = (index_path.parent_path() / it->get<std::string>()).string();
  }
  return map;
}

// Buffers that Llama checkpoints of older transformers versions saved; they are recomputed from
// the config, never read.
bool safe_to_skip(const std::string& name) {
  const std::string suffix = ".rotary_emb.inv_freq";
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The layer of "model.layers.<n>.<...>", or -1.
int64_t layer_of(const std::string& name) {
  const std::string prefix = "model.layers.";
  if (name.rfind(prefix, 0) != 0) return -1;
  const size_t dot = name.find('.', prefix.size());
  const std::string digits = name.substr(prefix.size(), dot == std::string::npos ? std::string::npos : dot - prefix.size());
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

// "model.layers.4.* (9 tensors; the config has 4 layers), model.layers.0.self_attn.o_proj.bias":
// layers past the config's count are one item each, so a whole extra layer reads as one.
std::string describe_unread(const std::set<std::string>& unread, int64_t n_layers) {
  std::map<int64_t, int> extra_layers;
  std::vector<std::string> items;
  for (const auto& name : unread) {
    const int64_t layer = layer_of(name);
    if (layer >= n_layers) {
      ++extra_layers[layer];
    } else {
      items.push_back(name);
    }
  }
  std::vector<std::string> layer_items;
  for (const auto& [layer, count] : extra_layers)
    layer_items.push_back("model.layers." + std::to_string(layer) + ".* (" + std::to_string(count) +
                          " tensors; the config has " + std::to_string(n_layers) + " layers)");
  items.insert(items.begin(), layer_items.begin(), layer_items.end());
  constexpr size_t kShown = 8;
  std::string out;
  for (size_t i = 0; i < items.size() && i < kShown; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > kShown) out += " and " + std::to_string(items.size() - kShown) + " more";
  return out;
}

}  // namespace

HfTensorSource::HfTensorSource(const std::string& dir) {
  const fs::path root(dir), single = root / "model.safetensors", index = root / "model.safetensors.index.json";
  // transformers' order (modeling_utils: SAFE_WEIGHTS_NAME before SAFE_WEIGHTS_INDEX_NAME): a
  // directory holding both loads the single file.
  if (fs::exists(single)) {
    single_path_ = single.string();
  } else if (fs::exists(index)) {
    index_path_ = index.string();
    location_ = read_index(index);
  } else {
    throw ModelLoadError(dir, "no model.safetensors or model.safetensors.index.json in this directory");
  }
}

std::vector<std::string> HfTensorSource::files() const {
  if (!indexed()) return {single_path_};
  std::set<std::string> unique;
  for (const auto& [name, file] : location_) unique.insert(file);
  return {unique.begin(), unique.end()};
}

bool HfTensorSource::contains(const std::string& name) {
  return indexed() ? location_.count(name) > 0 : open(single_path_).contains(name);
}

torch::Tensor HfTensorSource::get(const std::string& name) {
  std::string path = single_path_;
  if (indexed()) {
    auto it = location_.find(name);
    if (it == location_.end()) throw ModelLoadError(index_path_, "weight_map has no entry for '" + name + "'");
    path = it->second;
  }
  SafetensorsFile& file = open(path);
  if (!file.contains(name))
    throw ModelLoadError(path, "missing tensor '" + name + "'" + (indexed() ? " (the index places it in this shard)" : ""));
  torch::Tensor t = file.tensor(name);
  // Integer bytes read as weights give garbage (perplexity inf) rather than an error later.
  if (!t.is_floating_point())
    throw ModelLoadError(path, "tensor '" + name + "' has dtype " + safetensors_dtype_name(t.scalar_type()) +
                                   "; model weights must be floating point (F32, F16, BF16 or F64)");
  read_.insert(name);
  return t;
}

void HfTensorSource::require_all_read(int64_t n_layers) {
  std::set<std::string> unread;
  for (const auto& [name, file] : location_)
    if (!read_.count(name) && !safe_to_skip(name)) unread.insert(name);
  for (const auto& path : files())
    for (const auto& name : open(path).names())
      if (!read_.count(name) && !safe_to_skip(name)) unread.insert(name);
  if (unread.empty()) return;
  throw ModelLoadError(indexed() ? index_path_ : single_path_,
                       "holds tensors the config does not use (a config that does not match the checkpoint, or "
                       "weights kvbench does not apply): " + describe_unread(unread, n_layers));
}

SafetensorsFile& HfTensorSource::open(const std::string& path) {
  auto it = open_.find(path);
  if (it == open_.end()) it = open_.emplace(path, SafetensorsFile::open(path)).first;
  return it->second;
}

}  // namespace kvbench::models
