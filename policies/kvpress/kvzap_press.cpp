// KVzapPress (Jegou et al., "KVzap", 2026, arXiv 2601.07891; kvpress/presses/kvzap_press.py): a
// learned surrogate of KVzip's scores. Per layer a small model maps each token's hidden state (the
// attention's input, after the input RMSNorm) to one score per KV head: Linear(dim, kv_heads)
// ("linear") or Linear(dim, hidden) → GELU → Linear(hidden, kv_heads) ("mlp"). A token's score
// depends on its own hidden state alone, so it is computed once, when the token enters the cache,
// and travels with its slot. The models are the published artefacts nvidia/KVzap-<type>-<model
// name> (transformers' PreTrainedModel: config.json with input_dim, output_dim, n_modules,
// hidden_dim; model.safetensors with layers.<i>.weight/bias, or layers.<i>.0.* and layers.<i>.2.*
// for the MLP), read from the directory the user gives.
#include <filesystem>
#include <set>

#include "base/known_fields.hpp"
#include "datasets/json_parse.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"
#include "tensorio/safetensors.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::policies::kvpress {
namespace {

constexpr const char* kKvzapScore = "kvpress_kvzap_score";

// One layer's surrogate: weights [out, in] and biases [out], as nn.Linear stores them.
struct KvzapLayer {
  torch::Tensor w1, b1, w2, b2;  // w2/b2 undefined for "linear"
};

struct KvzapModel {
  std::string type;  // "linear" or "mlp"
  int64_t input_dim = 0, output_dim = 0;
  std::vector<KvzapLayer> layers;
};

KvzapModel read_kvzap(const std::string& dir, const std::string& type) {
  const std::string repo = "nvidia/KVzap-" + type + "-<model name>";
  if (dir.empty())
    throw std::invalid_argument("KVzap needs the model's surrogate: download the Hugging Face repository " + repo +
                                " (kvpress's KVzapPress.post_init_from_model) and give its directory as the parameter kvzap_model");
  const std::filesystem::path config_path = std::filesystem::path(dir) / "config.json";
  const std::filesystem::path weights_path = std::filesystem::path(dir) / "model.safetensors";
  for (const auto& p : {config_path, weights_path})
    if (!std::filesystem::exists(p))
      throw std::invalid_argument("KVzap: " + p.string() + " does not exist (expected the config.json and model.safetensors of " + repo + ")");
  const nlohmann::json config = datasets::read_json_file(config_path.string());
  auto integer = [&](const char* field) -> int64_t {
    if (!config.contains(field) || !config[field].is_number_integer() || config[field].get<int64_t>() < 1)
      throw models::ModelLoadError(config_path.string(), std::string("field '") + field + "' must be a positive integer");
    return config[field].get<int64_t>();
  };
  KvzapModel model;
  model.input_dim = integer("input_dim");
  model.output_dim = integer("output_dim");
  const int64_t n_modules = integer("n_modules");
  const bool mlp = config.contains("hidden_dim") && !config["hidden_dim"].is_null();
  model.type = mlp ? "mlp" : "linear";
  if (model.type != type)
    throw models::ModelLoadError(config_path.string(), "a KVzap-" + model.type + " model (hidden_dim " +
                                                           (mlp ? "given" : "null") + "), the policy wants KVzap-" + type);
  const int64_t hidden = mlp ? integer("hidden_dim") : 0;
  const models::SafetensorsFile weights = models::SafetensorsFile::open(weights_path.string());
  auto tensor = [&](const std::string& name, std::vector<int64_t> shape) {
    if (!weights.contains(name)) throw models::ModelLoadError(weights_path.string(), "no tensor '" + name + "'");
    torch::Tensor t = weights.tensor(name);
    if (t.sizes().vec() != shape) throw models::ModelLoadError(weights_path.string(), "tensor '" + name + "' has the wrong shape");
    return t.to(torch::kFloat32).clone();  // owned: the mapping goes with `weights`
  };
  for (int64_t i = 0; i < n_modules; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    KvzapLayer layer;
    if (mlp) {
      layer.w1 = tensor(p + "0.weight", {hidden, model.input_dim});
      layer.b1 = tensor(p + "0.bias", {hidden});
      layer.w2 = tensor(p + "2.weight", {model.output_dim, hidden});
      layer.b2 = tensor(p + "2.bias", {model.output_dim});
    } else {
      layer.w1 = tensor(p + "weight", {model.output_dim, model.input_dim});
      layer.b1 = tensor(p + "bias", {model.output_dim});
    }
    model.layers.push_back(std::move(layer));
  }
  return model;
}

class KvzapPress : public SlotScorer {
 public:
  KvzapPress(std::string name, const nlohmann::json& p)
      : name_(std::move(name)), path_(p.at("kvzap_model")), model_(read_kvzap(path_, p.at("kvzap_type"))) {}
  std::string name() const override { return name_; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.hidden_states = true;
    return r;
  }
  bool slot_order_free() const override { return true; }
  int64_t recent(int64_t) const override { return 0; }
  void begin(const SequenceInfo& info) override {
    if (static_cast<int64_t>(model_.layers.size()) != info.n_layers || model_.output_dim != info.n_kv_heads)
      throw std::invalid_argument(name_ + ": " + path_ + " scores " + std::to_string(model_.layers.size()) + " layers × " +
                                  std::to_string(model_.output_dim) + " KV heads, the model has " + std::to_string(info.n_layers) +
                                  " × " + std::to_string(info.n_kv_heads) + ": a KVzap model of another model?");
    observed_.clear();
  }
  // The forward's new tokens (the cache's last n_queries slots) get their scores.
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override {
    if (!stats.hidden_states.defined()) return;
    const torch::Tensor& h = stats.hidden_states;  // [T, dim]
    if (h.size(1) != model_.input_dim)
      throw std::invalid_argument(name_ + ": " + path_ + " reads hidden states of " + std::to_string(model_.input_dim) +
                                  " features, the model's are " + std::to_string(h.size(1)));
    const int64_t fresh = std::min(cache.size(), h.size(0));
    cache.state(kKvzapScore).narrow(1, cache.size() - fresh, fresh).copy_(kvzap_scores(layer, h.narrow(0, h.size(0) - fresh, fresh)));
    observed_.insert(layer);
  }
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor&) override {
    if (!observed_.count(layer)) throw std::logic_error(name_ + ": compress() without the layer's hidden states");
    return cache.state(kKvzapScore);
  }

 private:
  // [kv_heads, T]: the layer's surrogate on hidden states h [T, dim], in h's dtype as kvpress runs it.
  torch::Tensor kvzap_scores(int64_t layer, const torch::Tensor& h) {
    const KvzapLayer& m = on(h)[static_cast<size_t>(layer)];
    torch::Tensor out = torch::addmm(m.b1, h, m.w1.t());
    if (m.w2.defined()) out = torch::addmm(m.b2, torch::gelu(out), m.w2.t());
    return out.t().to(torch::kFloat32);
  }
  // The surrogate on h's device and in its dtype, moved once, not at every step.
  const std::vector<KvzapLayer>& on(const torch::Tensor& h) {
    if (on_device_.empty() || on_device_[0].w1.device() != h.device() || on_device_[0].w1.scalar_type() != h.scalar_type()) {
      auto move = [&h](const torch::Tensor& t) { return t.defined() ? t.to(h.device(), h.scalar_type(), /*non_blocking=*/true) : t; };
      on_device_.clear();
      for (const KvzapLayer& m : model_.layers) on_device_.push_back({move(m.w1), move(m.b1), move(m.w2), move(m.b2)});
    }
    return on_device_;
  }

  std::string name_, path_;
  KvzapModel model_;                   // float32, on the host
  std::vector<KvzapLayer> on_device_;  // model_'s layers where the hidden states are
  std::set<int64_t> observed_;
};

params::Params kvzap_params() {
  return {params::Param::file("kvzap_model", "directory of the surrogate: the download of nvidia/KVzap-<kvzap_type>-<model name>"),
          params::Param::choice("kvzap_type", "mlp", {"linear", "mlp"}, "the surrogate: Linear, or Linear-GELU-Linear (kvpress: model_type)")};
}

// kvpress:kvzap (either surrogate; the scorer the wrappers take) and the registry's
// kvzap_mlp_head = KVzapPress(model_type="mlp"), ranked per KV head as ScorerPress.
const bool kvzap_registered = [] {
  for (const char* name : {"kvpress:kvzap", "kvzap", "kvpress:kvzap_mlp_head"}) {
    ScorerRegistration({name, kvzap_params(), [name](const nlohmann::json& p) { return std::make_unique<KvzapPress>(name, p); }});
    PolicyRegistration({name, "A learned surrogate of KVzip's scores from each token's hidden state (the published KVzap models)",
                        "Jegou et al. 2026 (arXiv 2601.07891); kvpress kvzap_press.py", {},
                        [name](const nlohmann::json& p) { return std::make_unique<ScoredPolicy>(name, make_scorer(name, p)); },
                        "", name});
  }
  // kvzap_mlp_layer = AdaKVPress(KVzapPress(model_type="mlp")).
  PolicyRegistration({"kvpress:kvzap_mlp_layer", "AdaKVPress(KVzapPress(model_type=\"mlp\")): kvpress:adakv around kvpress:kvzap",
                      "Jegou et al. 2026; kvpress adakv_press.py, kvzap_press.py (PRESS_REGISTRY kvzap_mlp_layer)",
                      {alpha_safeguard_param()},
                      [](const nlohmann::json& p) {
                        nlohmann::json ada = p;
                        ada["press"] = "kvpress:kvzap";
                        return make_policy("kvpress:adakv", ada);
                      },
                      kAdaReadsDevice, "kvpress:kvzap"});
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
