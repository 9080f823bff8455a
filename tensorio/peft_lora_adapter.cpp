#include "tensorio/peft_lora_adapter.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

#include "datasets/field_location.hpp"
#include "datasets/json_parse.hpp"
#include "datasets/regular_file.hpp"
#include "tensorio/safetensors.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace {

constexpr std::array<const char*, kLoraTargets> kTargetNames = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
constexpr std::array<const char*, kLoraTargets> kTargetBlocks = {"self_attn", "self_attn", "self_attn", "self_attn", "mlp", "mlp", "mlp"};

// peft's LoraConfig and PeftConfig fields (peft 5d602fdbf) that leave the forward of an adapter's
// saved weights as it is: what they set is read from the tensors themselves (which layers and
// projections), or only acts at initialisation or training.
const std::vector<std::string> kInertFields = {
    "base_model_name_or_path", "revision", "task_type", "inference_mode", "peft_version", "auto_mapping", "target_modules",
    "exclude_modules", "layers_to_transform", "layers_pattern", "lora_dropout", "init_lora_weights", "megatron_config",
    "megatron_core", "loftq_config", "eva_config", "corda_config", "lora_ga_config", "qalora_group_size", "runtime_config",
    "ensure_weight_tying"};

// Fields whose other values change the computation in ways kvbench does not reproduce: each must
// be absent, null or the value here (an empty list or object counts as null).
const std::vector<std::pair<std::string, nlohmann::json>> kDefaultOnly = {
    {"use_dora", false}, {"bias", "none"}, {"lora_bias", false}, {"fan_in_fan_out", false}, {"modules_to_save", nullptr},
    {"rank_pattern", nullptr}, {"alpha_pattern", nullptr}, {"layer_replication", nullptr}, {"trainable_token_indices", nullptr},
    {"alora_invocation_tokens", nullptr}, {"use_qalora", false}, {"target_parameters", nullptr}, {"velora_config", nullptr},
    {"monteclora_config", nullptr}, {"use_bdlora", false}, {"arrow_config", nullptr}, {"kasa_config", nullptr}};

class AdapterConfig {
 public:
  explicit AdapterConfig(std::string path) : path_(std::move(path)), text_(datasets::read_regular_file(path_, "adapter config")) {
    json_ = datasets::parse_json(text_, path_);
    if (!json_.is_object()) throw ModelLoadError(path_, "not a JSON object");
  }
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw ModelLoadError(datasets::field_location(path_, text_, field), "field '" + field + "': " + what);
  }
  const nlohmann::json* find(const std::string& field) const {
    const auto it = json_.find(field);
    return it == json_.end() || it->is_null() ? nullptr : &*it;
  }
  const nlohmann::json& json() const { return json_; }

 private:
  std::string path_, text_;
  nlohmann::json json_;
};

struct Scaling {
  int64_t r;
  double value;
};

Scaling read_config(const AdapterConfig& config) {
  std::vector<std::string> known = kInertFields;
  for (const char* f : {"peft_type", "r", "lora_alpha", "use_rslora"}) known.push_back(f);
  for (const auto& [field, value] : kDefaultOnly) known.push_back(field);
  for (const auto& [field, value] : config.json().items())
    if (std::find(known.begin(), known.end(), field) == known.end()) config.fail(field, "unknown field (not one of peft's LoraConfig)");
  const nlohmann::json* type = config.find("peft_type");
  if (!type || *type != "LORA") config.fail("peft_type", "must be \"LORA\" (kvbench reads LoRA adapters)");
  for (const auto& [field, value] : kDefaultOnly) {
    const nlohmann::json* v = config.find(field);
    if (v && *v != value && !((v->is_array() || v->is_object()) && v->empty()))
      config.fail(field, v->dump() + " changes the adapter's forward in a way kvbench does not reproduce (it reads " +
                             (value.is_null() ? std::string("null") : value.dump()) + ")");
  }
  const nlohmann::json* r = config.find("r");
  if (!r || !r->is_number_integer() || r->get<int64_t>() < 1) config.fail("r", "must be a positive integer");
  const nlohmann::json* alpha = config.find("lora_alpha");
  if (!alpha || !alpha->is_number() || !std::isfinite(alpha->get<double>())) config.fail("lora_alpha", "must be a finite number");
  const nlohmann::json* rslora = config.find("use_rslora");
  if (rslora && !rslora->is_boolean()) config.fail("use_rslora", "must be true or false");
  const int64_t rank = r->get<int64_t>();
  const double a = alpha->get<double>();
  return {rank, rslora && rslora->get<bool>() ? a / std::sqrt(static_cast<double>(rank)) : a / static_cast<double>(rank)};
}

}  // namespace

const char* lora_target_name(LoraTarget target) { return kTargetNames[static_cast<size_t>(target)]; }

const LoraPair& LoraAdapter::pair(int64_t layer, LoraTarget target) const {
  static const LoraPair none;
  return layer < static_cast<int64_t>(layers.size()) ? layers[layer][static_cast<size_t>(target)] : none;
}

LoraAdapter read_peft_lora_adapter(const std::string& folder) {
  namespace fs = std::filesystem;
  const fs::path config_path = fs::path(folder) / "adapter_config.json", weights_path = fs::path(folder) / "adapter_model.safetensors";
  for (const fs::path& p : {config_path, weights_path})
    if (!fs::is_regular_file(p)) throw ModelLoadError(p.string(), "missing (a PEFT LoRA adapter folder holds adapter_config.json and adapter_model.safetensors)");
  const Scaling scaling = read_config(AdapterConfig(config_path.string()));
  LoraAdapter adapter;
  adapter.origin = folder;
  adapter.scaling = scaling.value;
  const SafetensorsFile file = SafetensorsFile::open(weights_path.string());
  // transformers' load_adapter strips "base_model.model." (peft's PeftModel prefix) before matching.
  static const std::regex key(R"((?:base_model\.model\.)?model\.layers\.(\d{1,6})\.(self_attn|mlp)\.([a-z_]+)\.lora_(A|B)\.weight)");
  for (const std::string& name : file.names()) {
    std::smatch m;
    if (!std::regex_match(name, m, key))
      throw ModelLoadError(weights_path.string(), "tensor '" + name + "': kvbench reads LoRA weights of the decoder layers' projections only "
                                                  "(model.layers.<l>.<self_attn|mlp>.<proj>.lora_A/lora_B.weight)");
    const int64_t layer = std::stoll(m[1]);
    const auto target = std::find(kTargetNames.begin(), kTargetNames.end(), m[3].str());
    const size_t t = static_cast<size_t>(target - kTargetNames.begin());
    if (target == kTargetNames.end() || kTargetBlocks[t] != m[2].str())
      throw ModelLoadError(weights_path.string(), "tensor '" + name + "': '" + m[2].str() + "." + m[3].str() + "' is not a projection of a Llama-family layer");
    if (layer >= static_cast<int64_t>(adapter.layers.size())) adapter.layers.resize(layer + 1);
    const torch::Tensor value = file.tensor(name);
    if (value.dim() != 2 || !value.is_floating_point())
      throw ModelLoadError(weights_path.string(), "tensor '" + name + "' must be a 2-D floating-point matrix");
    if (value.size(m[4] == "A" ? 0 : 1) != scaling.r)
      throw ModelLoadError(weights_path.string(), "tensor '" + name + "' has rank " + std::to_string(value.size(m[4] == "A" ? 0 : 1)) +
                                                      ", adapter_config.json's r is " + std::to_string(scaling.r));
    LoraPair& pair = adapter.layers[layer][t];
    (m[4] == "A" ? pair.a : pair.b) = value.to(torch::kFloat32, /*non_blocking=*/false, /*copy=*/true);  // owned: the mapping goes with `file`
    if (pair.name.empty() || m[4] == "A") pair.name = name;
  }
  for (const auto& layer : adapter.layers)
    for (const LoraPair& pair : layer)
      if (pair.a.defined() != pair.b.defined())
        throw ModelLoadError(weights_path.string(), "tensor '" + pair.name + "' has no " + (pair.a.defined() ? "lora_B" : "lora_A") + " beside it");
  return adapter;
}

}  // namespace kvbench::models
