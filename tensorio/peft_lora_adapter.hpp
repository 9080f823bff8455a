#pragma once
// A PEFT LoRA adapter as peft's save_pretrained writes it and transformers' load_adapter reads it: a
// folder holding adapter_config.json and adapter_model.safetensors, whose tensors
// "[base_model.model.]model.layers.<l>.<self_attn|mlp>.<proj>.lora_{A,B}.weight" adapt the decoder
// layers' nn.Linear projections. A targeted projection computes W x + lora_B(lora_A(x)) · scaling
// (peft/tuners/lora/layer.py Linear.forward; dropout is off at inference), scaling lora_alpha / r, or
// lora_alpha / √r with use_rslora. kvbench's first reader is kvpress's RestoreKV, whose restore pass
// runs with the adapter of higokri/RestoreKV-<model> enabled.
#include <torch/torch.h>

#include <array>
#include <string>
#include <vector>

namespace kvbench::models {

// The projections a decoder layer can adapt, in transformers' names (q_proj … down_proj).
enum class LoraTarget { kQ, kK, kV, kO, kGate, kUp, kDown };
constexpr size_t kLoraTargets = 7;
const char* lora_target_name(LoraTarget target);

struct LoraPair {
  torch::Tensor a;   // lora_A [r, in_features], float32 on the CPU; undefined: the projection is not adapted
  torch::Tensor b;   // lora_B [out_features, r], float32 on the CPU
  std::string name;  // the lora_A tensor's key (lora_B's where it stands alone), for errors
  bool defined() const { return a.defined(); }
};

struct LoraAdapter {
  std::string origin;  // the adapter's folder
  double scaling = 1.0;
  std::vector<std::array<LoraPair, kLoraTargets>> layers;  // per decoder layer up to the last adapted one, per LoraTarget
  // Undefined where the layer or the projection is not adapted.
  const LoraPair& pair(int64_t layer, LoraTarget target) const;
};

// Reads the adapter in `folder`. Throws ModelLoadError
// naming the file (and line) and the field or tensor: a missing file, an unknown config key, a
// setting that changes the computation in a way kvbench does not reproduce (DoRA, bias, rank or
// alpha patterns, layer replication, ...), a tensor outside the decoder's projections, a lora_A
// without its lora_B, or ranks that disagree with r. The layers and the in/out features are checked
// against the model by the transformer that runs it.
LoraAdapter read_peft_lora_adapter(const std::string& folder);

}  // namespace kvbench::models
