// FastKVzipPress (Kim, Han & Yun 2026, "Fast KVzip", arXiv 2601.17668; kvpress fastkvzip_press.py):
// KVzip's scores predicted by a small trained gate per layer from the prefill's hidden states h_t
// (the attention's input), no extra forward. Gate of KV head k, query group g (d = 16):
//   q = RMSNorm(W_q h + b_q) [Hkv, G, d], κ = RMSNorm(W_k h) [Hkv, d],
//   logit = ⟨κ_k, q_kg⟩/√d + b_kg, base_s = ⟨k_base[k, s], q_kg⟩/√d for the learned sink keys s,
//   score = mean over g of 1 / (1 + Σ_s exp(base_s − logit)).
// The first n_sink tokens and the last int(n · window_ratio) (window_size from 32000 tokens on)
// score 1 (a window of 0 is Python's [-0:]: every token scores 1). The budget is KVzip's
// (pair_pruning.hpp): global over layers unless layerwise. The gates are the published files
// (Hugging Face Jang-Hyun/Fast-KVzip, <model>/q<G>_dim16_sink16.pt: torch.save of {"module": one
// state_dict per layer, ...}), read by tensorio/torch_file.hpp and kept once per process per file.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>

#include "policies/kvpress/pair_pruning.hpp"
#include "policies/kvpress/rescoring_press.hpp"
#include "policies/registry.hpp"
#include "tensorio/torch_file.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::policies::kvpress {
namespace {

constexpr const char* kGateRepo = "Jang-Hyun/Fast-KVzip";

struct Gate {
  torch::Tensor wq, bq, wk, q_norm, k_norm, b, k_base;  // float32, as the file's shapes
};

struct Gates {
  int64_t input_dim = 0, heads = 0, groups = 0, dim = 0, sinks = 0;
  std::vector<Gate> layers;
};

// The file's gates, checked for one shape across layers (kvpress derives it from layer 0's).
Gates read_gates(const std::string& path) {
  const models::PickleRef root = models::read_torch_file(path);
  const models::PickleValue* module = root->get("module");
  if (!module || module->kind != models::PickleValue::Kind::kList || module->items.empty())
    throw models::ModelLoadError(path, "no list 'module' of per-layer gate weights (FastKVzip's optim.py saves one)");
  Gates g;
  for (size_t l = 0; l < module->items.size(); ++l) {
    const models::PickleValue& state = *module->items[l];
    auto tensor = [&](const char* key) {
      const models::PickleValue* v = state.get(key);
      if (!v || v->kind != models::PickleValue::Kind::kTensor)
        throw models::ModelLoadError(path, "module[" + std::to_string(l) + "]: no tensor '" + key + "'");
      return v->tensor.to(torch::kFloat32);
    };
    Gate gate{tensor("q_proj.weight"), tensor("q_proj.bias"), tensor("k_proj.weight"), tensor("q_norm.weight"),
              tensor("k_norm.weight"), tensor("b"), tensor("k_base")};
    if (l == 0) {
      if (gate.q_norm.dim() != 1 || gate.wk.dim() != 2 || gate.wq.dim() != 2 || gate.k_base.dim() != 4 || gate.q_norm.size(0) < 1)
        throw models::ModelLoadError(path, "module[0]: tensors of the wrong rank for a FastKVzip gate");
      g.dim = gate.q_norm.size(0), g.input_dim = gate.wq.size(1), g.heads = gate.wk.size(0) / g.dim;
      g.groups = g.heads ? gate.wq.size(0) / (g.heads * g.dim) : 0, g.sinks = gate.k_base.size(2);
      if (g.heads < 1 || g.groups < 1) throw models::ModelLoadError(path, "module[0]: q_proj/k_proj rows give no head");
    }
    const std::vector<std::pair<const char*, std::vector<int64_t>>> shapes = {
        {"q_proj.weight", {g.heads * g.groups * g.dim, g.input_dim}}, {"q_proj.bias", {g.heads * g.groups * g.dim}},
        {"k_proj.weight", {g.heads * g.dim, g.input_dim}}, {"q_norm.weight", {g.dim}}, {"k_norm.weight", {g.dim}},
        {"b", {g.heads, 1, g.groups}}, {"k_base", {g.heads, 1, g.sinks, g.dim}}};
    const torch::Tensor* tensors[] = {&gate.wq, &gate.bq, &gate.wk, &gate.q_norm, &gate.k_norm, &gate.b, &gate.k_base};
    for (size_t i = 0; i < shapes.size(); ++i)
      if (tensors[i]->sizes().vec() != shapes[i].second)
        throw models::ModelLoadError(path, "module[" + std::to_string(l) + "]: tensor '" + shapes[i].first + "' has shape " +
                                               c10::str(tensors[i]->sizes()) + ", the gate's layout needs " + c10::str(c10::IntArrayRef(shapes[i].second)));
    g.layers.push_back(std::move(gate));
  }
  return g;
}

// Read once per process per file: a model's gates are shared by all its sequences.
std::shared_ptr<const Gates> gates_of(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Gates>> loaded;
  const std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<const Gates>& slot = loaded[std::filesystem::absolute(path).string()];
  if (!slot) slot = std::make_shared<const Gates>(read_gates(path));
  return slot;
}

// transformers' Qwen3RMSNorm (eps 1e-6) over the last dimension.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight) {
  return weight * (x * torch::rsqrt(x.square().mean(-1, true) + 1e-6));
}

class FastKvzipPress : public RescoringPress {
 public:
  FastKvzipPress(std::string name, const nlohmann::json& p)
      : RescoringPress(std::move(name), "from its gates on the prefill's hidden states (kvpress: at the prefill)"),
        layerwise_(p.at("layerwise")), n_sink_(p.at("n_sink")), window_size_(p.at("window_size")),
        window_ratio_(p.at("window_ratio")), path_(p.at("gates")) {}

  StatsRequest wants() const override {
    StatsRequest r;
    r.hidden_states = true;
    return r;
  }
  void begin(const SequenceInfo& info) override {
    RescoringPress::begin(info);
    const int64_t groups = info.n_heads / info.n_kv_heads;
    const std::string file = "<model name, lower case>/q" + std::to_string(groups) + "_dim16_sink16.pt";
    if (path_.empty())
      throw std::invalid_argument(press_name() + " needs the model's trained gates: download " + file + " from the Hugging Face repository " +
                                  kGateRepo + " (kvpress's get_gate_weight) and give its path as the parameter gates");
    if (!std::filesystem::is_regular_file(path_))
      throw std::invalid_argument(press_name() + ": " + path_ + " does not exist (expected " + file + " of " + kGateRepo + ")");
    gates_ = gates_of(path_);
    if (static_cast<int64_t>(gates_->layers.size()) != info.n_layers || gates_->heads != info.n_kv_heads || gates_->groups != groups)
      throw std::invalid_argument(press_name() + ": " + path_ + " gates " + std::to_string(gates_->layers.size()) + " layers × " +
                                  std::to_string(gates_->heads) + " KV heads × " + std::to_string(gates_->groups) + " query groups; the model has " +
                                  std::to_string(info.n_layers) + " × " + std::to_string(info.n_kv_heads) + " × " + std::to_string(groups));
  }
  std::vector<std::vector<int64_t>> scoring_inputs(const std::vector<int64_t>&, const PromptText*) override { return {}; }
  void observe(int64_t layer, LayerCache&, const AttentionStats& stats, Phase phase) override {
    if (phase != Phase::kPrefill || !stats.hidden_states.defined() || info_.unlimited()) return;
    if (stats.hidden_states.size(1) != gates_->input_dim)
      throw std::invalid_argument(press_name() + ": " + path_ + " reads hidden states of " + std::to_string(gates_->input_dim) +
                                  " features; the model's have " + std::to_string(stats.hidden_states.size(1)));
    if (scores_.empty()) scores_.resize(info_.n_layers);
    torch::Tensor s = gate_scores(gates_->layers[layer], stats.hidden_states.to(torch::kFloat32));  // [Hkv, n]
    const int64_t n = s.size(1);
    s.narrow(1, 0, std::min(n_sink_, n)).fill_(1.0);
    const int64_t window = n < 32000 ? static_cast<int64_t>(static_cast<double>(n) * window_ratio_) : window_size_;
    const int64_t last = window == 0 ? n : std::min(window, n);  // kvpress's scores[..., -0:] is every token
    s.narrow(1, n - last, last).fill_(1.0);
    scores_[layer] = s.cpu();
  }

 protected:
  StatsRequest scoring_wants() const override { return {}; }
  void forget() override {
    scores_.clear();
    pruned_.clear();
  }
  bool scored() const override {
    return !scores_.empty() && std::all_of(scores_.begin(), scores_.end(), [](const torch::Tensor& s) { return s.defined(); });
  }
  std::vector<std::vector<int64_t>> plan() override {
    PairPruning pruning = prune_lowest_pairs(scores_, info_, layerwise_);
    pruned_ = std::move(pruning.pruned);
    return pruning.kept;
  }
  torch::Tensor kept_positions(int64_t layer, int64_t head, int64_t) override { return kept_of_head(pruned_[layer], head, info_.prompt_len); }

 private:
  torch::Tensor gate_scores(const Gate& w, const torch::Tensor& h) const {
    const int64_t n = h.size(0), H = gates_->heads, G = gates_->groups, d = gates_->dim;
    const torch::Tensor q = rms_norm(torch::addmm(w.bq.to(h.device()), h, w.wq.to(h.device()).t()).view({n, H, G, d}), w.q_norm.to(h.device()));
    const torch::Tensor k = rms_norm(h.matmul(w.wk.to(h.device()).t()).view({n, H, d}), w.k_norm.to(h.device()));
    const double root_d = std::sqrt(static_cast<double>(d));
    const torch::Tensor logit = torch::einsum("nhd,nhgd->hng", {k, q}) / root_d + w.b.to(h.device());            // [H, n, G]
    const torch::Tensor base = torch::einsum("hsd,nhgd->hnsg", {w.k_base.to(h.device()).squeeze(1), q}) / root_d;  // [H, n, S, G]
    return (1.0 / (1.0 + (base - logit.unsqueeze(2)).exp().sum(2))).mean(-1);                                    // [H, n]
  }

  bool layerwise_;
  int64_t n_sink_, window_size_;
  double window_ratio_;
  std::string path_;
  std::shared_ptr<const Gates> gates_;
  std::vector<torch::Tensor> scores_;  // per layer: [Hkv, n] on the CPU (kvpress's score_val)
  std::vector<torch::Tensor> pruned_;  // per layer: [Hkv · n] bool, the pairs evicted
};

params::Params fastkvzip_params() {
  using params::Param;
  return {Param::file("gates", "the gate file: <model>/q<G>_dim16_sink16.pt of Jang-Hyun/Fast-KVzip"),
          Param::flag("layerwise", false, "the budget per layer (int(Hkv·n·r) each) instead of over every layer"),
          Param::integer("n_sink", 4, "first tokens that score 1", 0),
          Param::integer("window_size", 4096, "last tokens that score 1 from 32000 prompt tokens on", 0),
          Param::number("window_ratio", 0.02, "share of the prompt's last tokens that score 1 below 32000 tokens", 0, 1)};
}

const bool fastkvzip_registered = [] {
  for (const std::string name : {"fastkvzip", "kvpress:fastkvzip"})
    PolicyRegistration({name, "Fast KVzip: trained gates on the prefill's hidden states predict KVzip's scores; a global budget",
                        "Kim, Han & Yun 2026 (arXiv 2601.17668); kvpress fastkvzip_press.py", fastkvzip_params(),
                        [name](const nlohmann::json& p) { return std::make_unique<FastKvzipPress>(name, p); },
                        "its plan sorts every layer's scores on the host, once per prompt"});
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
