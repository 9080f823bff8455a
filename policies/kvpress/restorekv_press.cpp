// RestoreKVPress (kvpress/presses/restorekv_press.py, "RestoreKV: learned restoration on top of
// KVzip", arXiv 2608.01247): KVzip (or KVzip+) scores the prompt; then, before anything is evicted,
// N learned restore embeddings run once through the model at positions n … n+N−1 with a LoRA adapter
// enabled (the session's appended forward, policies/context_rescoring.hpp; nothing scores it) and
// their keys and values stay in every layer's cache. KVzip then evicts over the n prompt tokens with
// the ratio raised to min(1, r + N/n), so the restore tokens take N of each head's budget and what
// follows the prompt starts at n + N. With r = 0 kvpress runs no press, so nothing is appended; a
// token budget B is r = 1 − B/n, raised the same way. The artefacts are the hub's
// higokri/RestoreKV-<model>[_plus]: restore_embeddings.safetensors ("restore_embeddings" [N, hidden])
// beside a PEFT LoRA adapter (tensorio/peft_lora_adapter.hpp), read from the folder the user gives.
#include <algorithm>
#include <filesystem>
#include <optional>

#include "policies/kvpress/kvzip_press.hpp"
#include "policies/registry.hpp"
#include "tensorio/safetensors.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::policies::kvpress {
namespace {

constexpr const char* kRestoreEmbeddings = "restore_embeddings";

class RestoreKvPress : public KvzipPress {
 public:
  RestoreKvPress(std::string name, const nlohmann::json& p) : KvzipPress(name, p), folder_(p.at("restore_model")) {
    const std::string hub = std::string("higokri/RestoreKV-<model name>") + (p.at("kvzip_plus_normalization").get<bool>() ? "_plus" : "");
    if (folder_.empty())
      throw std::invalid_argument(name + " needs its learned restore tokens and LoRA adapter: download the Hugging Face repository " + hub +
                                  " (kvpress's RestoreKVPress.post_init_from_model) and give its folder as the parameter restore_model");
    const std::filesystem::path file = std::filesystem::path(folder_) / "restore_embeddings.safetensors";
    if (!std::filesystem::is_regular_file(file))
      throw std::invalid_argument(name + ": " + file.string() + " does not exist (expected the restore embeddings of " + hub + ")");
    embeddings_origin_ = file.string();
    const models::SafetensorsFile embeddings = models::SafetensorsFile::open(embeddings_origin_);
    if (!embeddings.contains(kRestoreEmbeddings))
      throw models::ModelLoadError(embeddings_origin_, std::string("no tensor '") + kRestoreEmbeddings + "' (the restore tokens [N, hidden])");
    const torch::Tensor rows = embeddings.tensor(kRestoreEmbeddings);
    if (rows.dim() != 2 || rows.size(0) < 1 || !rows.is_floating_point())
      throw models::ModelLoadError(embeddings_origin_, std::string("tensor '") + kRestoreEmbeddings + "' must be [N ≥ 1, hidden] floating point");
    embeddings_ = rows.to(torch::kFloat32, /*non_blocking=*/false, /*copy=*/true);  // owned: the mapping goes with `embeddings`
    adapter_ = models::read_peft_lora_adapter(folder_);
  }

  void begin(const SequenceInfo& info) override {
    KvzipPress::begin(info);
    appended_ = 0;
  }
  // kvpress casts the restore embeddings to the model's dtype; the session's forward does.
  std::optional<AppendedEmbeddings> appended() override {
    if (requested_ratio() <= 0) return std::nullopt;
    appended_ = embeddings_.size(0);
    return AppendedEmbeddings{embeddings_, &adapter_, embeddings_origin_};
  }

 protected:
  std::vector<std::vector<int64_t>> plan() override {
    SequenceInfo raised = info_;
    raised.compression_ratio = std::min(1.0, requested_ratio() + static_cast<double>(appended_) / static_cast<double>(info_.prompt_len));
    std::vector<std::vector<int64_t>> kept = plan_with(raised);
    for (std::vector<int64_t>& layer : kept)
      for (int64_t& head : layer) head += appended_;
    return kept;
  }
  torch::Tensor kept_positions(int64_t layer, int64_t head, int64_t count) override {
    const int64_t n = info_.prompt_len;
    return torch::cat({KvzipPress::kept_positions(layer, head, count - appended_), torch::arange(n, n + appended_, torch::kInt64)});
  }

 private:
  double requested_ratio() const {
    const int64_t n = info_.prompt_len;
    return info_.compression_ratio ? *info_.compression_ratio : 1.0 - static_cast<double>(std::min(info_.budget, n)) / static_cast<double>(n);
  }

  std::string folder_, embeddings_origin_;
  torch::Tensor embeddings_;  // [N, hidden] float32 on the host
  models::LoraAdapter adapter_;
  int64_t appended_ = 0;  // restore tokens in this prompt's cache
};

const bool restorekv_registered = [] {
  for (const auto& [name, plus] : std::vector<std::pair<std::string, bool>>{{"kvpress:RestoreKV", false}, {"kvpress:RestoreKV_plus", true}}) {
    params::Params p = kvzip_params(plus);
    p.push_back(params::Param::file("restore_model",
                                    std::string("the folder of higokri/RestoreKV-<model name>") + (plus ? "_plus" : "") +
                                        ": restore_embeddings.safetensors, adapter_config.json and adapter_model.safetensors"));
    PolicyRegistration({name,
                        std::string("RestoreKV") + (plus ? "+" : "") +
                            ": KVzip" + (plus ? "+" : "") + " scoring, then N learned restore tokens run once with a LoRA adapter and kept, "
                            "the context's ratio raised by N/n",
                        "arXiv 2608.01247; kvpress restorekv_press.py", p,
                        [name = name](const nlohmann::json& params) { return std::make_unique<RestoreKvPress>(name, params); },
                        "its plan sorts every layer's scores on the host, once per prompt"});
  }
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
