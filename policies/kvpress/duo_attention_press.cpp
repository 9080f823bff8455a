// DuoAttentionPress (Xiao et al., "DuoAttention: Efficient Long-Context LLM Inference with Retrieval
// and Streaming Heads", 2024; kvpress/presses/duo_attention_press.py): learned per-(layer, KV head)
// scores of how much a head needs the full context. The round(L·Hkv·head_compression_ratio)
// lowest-scored heads become streaming heads: after the prefill they keep only the first sink_size
// and the last recent_size tokens; the other heads keep everything. The scores and window sizes are
// the published pattern (mit-han-lab/duo-attention attn_patterns/<model>/<run>/: config.json with
// sink_size and recent_size, full_attention_heads.tsv with one row of KV-head scores per layer),
// read from the directory the user gives. kvpress masks; kvbench evicts (ragged heads).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "datasets/json_parse.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::policies::kvpress {
namespace {

struct DuoPattern {
  int64_t sink = 0, recent = 0;
  torch::Tensor scores;  // [layers, kv_heads] float64, clipped to [0, 1] as kvpress does
};

// np.loadtxt(delimiter="\t") of full_attention_heads.tsv: a row of floats per layer.
torch::Tensor read_head_scores(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("DuoAttention: cannot read " + path);
  std::vector<double> values;
  int64_t columns = -1, rows = 0, line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;  // np.loadtxt skips blank and comment lines
    std::stringstream fields(line);
    int64_t n = 0;
    for (std::string field; std::getline(fields, field, '\t'); ++n) {
      char* end = nullptr;
      const double v = std::strtod(field.c_str(), &end);
      if (field.empty() || end != field.c_str() + field.size() || std::isnan(v))
        throw models::ModelLoadError(path, "line " + std::to_string(line_no) + ", column " + std::to_string(n + 1) +
                                               ": '" + field + "' is not a number");
      values.push_back(std::clamp(v, 0.0, 1.0));
    }
    if (columns >= 0 && n != columns)
      throw models::ModelLoadError(path, "line " + std::to_string(line_no) + " has " + std::to_string(n) +
                                             " scores, the lines before " + std::to_string(columns));
    columns = n;
    ++rows;
  }
  if (rows == 0) throw models::ModelLoadError(path, "no scores");
  return torch::tensor(values, torch::kFloat64).reshape({rows, columns});
}

DuoPattern read_pattern(const std::string& dir) {
  if (dir.empty())
    throw std::invalid_argument(
        "DuoAttention needs the model's attention pattern: the directory attn_patterns/<model>/<run>/ of "
        "github.com/mit-han-lab/duo-attention (config.json and full_attention_heads.tsv; kvpress's PATTERNS_DICT names "
        "the run of each supported checkpoint), given as the parameter attn_pattern");
  const std::string config_path = dir + "/config.json";
  const nlohmann::json config = datasets::read_json_file(config_path);
  auto size = [&](const char* field) -> int64_t {
    if (!config.contains(field) || !config[field].is_number_integer() || config[field].get<int64_t>() < 0)
      throw models::ModelLoadError(config_path, std::string("field '") + field + "' must be a non-negative integer");
    return config[field].get<int64_t>();
  };
  return {size("sink_size"), size("recent_size"), read_head_scores(dir + "/full_attention_heads.tsv")};
}

class DuoAttentionPress : public Policy {
 public:
  DuoAttentionPress(std::string name, const nlohmann::json& p)
      : name_(std::move(name)), path_(p.at("attn_pattern")), ratio_(p.at("head_compression_ratio")), pattern_(read_pattern(path_)) {
    // The round(size · ratio) lowest scores (Python's round: half to even); among equal scores the
    // lower (layer, head) first (numpy's argsort leaves that order unspecified).
    const int64_t size = pattern_.scores.numel();
    const int64_t pruned = static_cast<int64_t>(std::nearbyint(static_cast<double>(size) * ratio_));
    const torch::Tensor order = std::get<1>(pattern_.scores.reshape(-1).sort(/*stable=*/true, 0, /*descending=*/false));
    streaming_ = torch::zeros({size}, torch::kBool);
    if (pruned > 0) streaming_.index_fill_(0, order.narrow(0, 0, pruned), true);
    streaming_ = streaming_.reshape(pattern_.scores.sizes());
  }
  std::string name() const override { return name_; }
  void begin(const SequenceInfo& info) override {
    if (!info.unlimited())
      throw std::invalid_argument(name_ + " sizes its heads by head_compression_ratio, not by a budget: run it with --budget full");
    if (pattern_.scores.size(0) != info.n_layers || pattern_.scores.size(1) != info.n_kv_heads)
      throw std::invalid_argument(name_ + ": " + path_ + "/full_attention_heads.tsv scores " +
                                  std::to_string(pattern_.scores.size(0)) + " layers × " + std::to_string(pattern_.scores.size(1)) +
                                  " KV heads, the model has " + std::to_string(info.n_layers) + " × " +
                                  std::to_string(info.n_kv_heads) + ": the pattern of another model?");
    Policy::begin(info);
  }
  // kvpress masks the streaming heads' tokens [sink, n − recent) once, after the prefill (a
  // `-recent_size` slice: nothing when recent_size is 0).
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (phase == Phase::kPrefillBlock) throw std::invalid_argument(name_ + " masks the prompt once: use --protocol oneshot");
    if (phase != Phase::kPrefill || pattern_.recent == 0) return;
    const int64_t n = cache.size(), heads = cache.kv_heads();
    if (n <= pattern_.sink + pattern_.recent || !cache.all_valid() || !cache.in_arrival_order()) return;
    const torch::Tensor streaming = streaming_[layer];
    const int64_t middle = n - pattern_.sink - pattern_.recent;
    std::vector<int64_t> counts(heads, 0);
    torch::Tensor victims = torch::zeros({heads, middle}, torch::kInt64);
    for (int64_t h = 0; h < heads; ++h)
      if (streaming[h].item<bool>()) {
        counts[h] = middle;
        victims[h].copy_(torch::arange(pattern_.sink, pattern_.sink + middle));
      }
    if (std::all_of(counts.begin(), counts.end(), [](int64_t c) { return c == 0; })) return;
    cache.evict(victims.to(cache.keys().device(), /*non_blocking=*/true), torch::tensor(counts, torch::kInt64));
  }

 private:
  std::string name_, path_;
  double ratio_;
  DuoPattern pattern_;
  torch::Tensor streaming_;  // [layers, kv_heads] bool
};

// kvpress:duo_attention, and `duo_attention` (a press new to kvbench).
const bool duo_attention_registered = [] {
  for (const char* name : {"kvpress:duo_attention", "duo_attention"})
    PolicyRegistration(
        {name, "Streaming heads (sinks + recent window) for the lowest-scored heads of a learned pattern, full cache for the rest",
         "Xiao et al. 2024 (arXiv 2410.10819); kvpress duo_attention_press.py",
         {params::Param::text("attn_pattern", "", "directory of the pattern: attn_patterns/<model>/<run>/ of mit-han-lab/duo-attention"),
          params::Param::number("head_compression_ratio", 0.0, "share of the (layer, KV head) pairs made streaming heads", 0, 1)},
         [name](const nlohmann::json& p) { return std::make_unique<DuoAttentionPress>(name, p); }});
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
