// QFilterPress (Godey et al., "Q-Filters: Leveraging QK Geometry for Efficient KV Cache
// Compression", 2025; kvpress/presses/qfilter_press.py): a learned filter vector f per layer and KV
// head; a token's score is −⟨f, k⟩ of its cached (rotated) key. The filters are the published
// artefact: Hugging Face repository nthngdy/<model name>_qfilt (kvpress renames "Meta-Llama" to
// "Llama" but for Meta-Llama-3.1-405B), saved by huggingface_hub's PyTorchModelHubMixin as
// model.safetensors holding q_filters [layers, kv_heads, head_dim]. kvbench reads that file from
// the path the user gives (the repository's directory or the file itself).
#include <filesystem>

#include "policies/kvpress/press.hpp"
#include "tensorio/safetensors.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::policies::kvpress {
namespace {

constexpr const char* kQFiltersTensor = "q_filters";

// [layers, kv_heads, head_dim] float32, read from `path` (a directory holding model.safetensors,
// or a .safetensors file).
torch::Tensor read_q_filters(const std::string& path) {
  if (path.empty())
    throw std::invalid_argument(
        "kvpress:qfilter needs the model's Q-filters: download the Hugging Face repository nthngdy/<model name>_qfilt "
        "(kvpress's QFilterPress.load_q_filters; \"Meta-Llama\" in the name becomes \"Llama\") and give its directory or "
        "its model.safetensors as the parameter q_filters");
  const std::filesystem::path file = std::filesystem::is_directory(path) ? std::filesystem::path(path) / "model.safetensors" : std::filesystem::path(path);
  if (!std::filesystem::exists(file))
    throw std::invalid_argument("kvpress:qfilter: " + file.string() +
                                " does not exist (expected the model.safetensors of nthngdy/<model name>_qfilt)");
  const models::SafetensorsFile filters = models::SafetensorsFile::open(file.string());
  if (!filters.contains(kQFiltersTensor))
    throw models::ModelLoadError(file.string(), std::string("no tensor '") + kQFiltersTensor + "' (Q-filters [layers, kv_heads, head_dim])");
  const torch::Tensor q = filters.tensor(kQFiltersTensor);
  if (q.dim() != 3) throw models::ModelLoadError(file.string(), std::string("tensor '") + kQFiltersTensor + "' must be [layers, kv_heads, head_dim]");
  return q.to(torch::kFloat32).clone();  // owned: the mapping goes with `filters`
}

class QFilterPress : public Press {
 public:
  explicit QFilterPress(const nlohmann::json& p) : path_(p.at("q_filters")), filters_(read_q_filters(path_)) {}
  std::string name() const override { return "kvpress:qfilter"; }
  bool slot_order_free() const override { return true; }
  void begin(const SequenceInfo& info) override {
    const std::vector<int64_t> want{info.n_layers, info.n_kv_heads, info.head_dim};
    if (filters_.sizes().vec() != want)
      throw std::invalid_argument("kvpress:qfilter: " + path_ + ": q_filters is " + shape(filters_.sizes().vec()) +
                                  ", the model needs " + shape(want) + " (layers, kv_heads, head_dim): Q-filters of another model?");
  }
  // kvpress casts the filters to the model's dtype: the product is taken in the keys' dtype.
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor&) override {
    const torch::Tensor keys = cache.keys();
    // The filters go to the keys' device once, not at every step.
    if (!on_device_.defined() || on_device_.device() != keys.device() || on_device_.scalar_type() != keys.scalar_type())
      on_device_ = filters_.to(keys.device(), keys.scalar_type(), /*non_blocking=*/true);
    return (on_device_[layer].unsqueeze(1) * keys).sum(-1).neg().to(torch::kFloat32);  // filter [kv_heads, 1, d]
  }

 private:
  static std::string shape(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
  }

  std::string path_;
  torch::Tensor filters_;    // [layers, kv_heads, head_dim] float32, on the host
  torch::Tensor on_device_;  // filters_ on the keys' device, in their dtype
};

const PressRegistration qfilter_registration(
    {"qfilter", "Minus the key's product with a learned per-head filter (the published Q-filters)",
     "Godey et al. 2025 (arXiv 2503.02812); kvpress qfilter_press.py",
     {params::Param::file("q_filters",
                          "the Q-filters: a directory holding model.safetensors of nthngdy/<model name>_qfilt, or that file")},
     [](const nlohmann::json& p) { return std::make_unique<QFilterPress>(p); },
     /*bare_name=*/true});

}  // namespace
}  // namespace kvbench::policies::kvpress
