// DuoAttentionPress (Xiao et al., "DuoAttention: Efficient Long-Context LLM Inference with Retrieval
// and Streaming Heads", 2024; kvpress/presses/duo_attention_press.py): learned per-(layer, KV head)
// scores of how much a head needs the full context. The round(L·Hkv·head_compression_ratio)
// lowest-scored heads become streaming heads: after the prefill they keep only the first sink_size
// and the last recent_size tokens; the other heads keep everything. The scores and window sizes are
// the published pattern (mit-han-lab/duo-attention attn_patterns/<model>/<run>/: config.json with
// sink_size and recent_size, full_attention_heads.tsv with one row of KV-head scores per layer),
// read from the directory the user gives — or, kvpress:duo_attention_on_the_fly, scored from the
// model itself on BookSum chapters (kvpress's experimental duo_attention_on_the_fly, sink 128 and
// recent 256). kvpress masks; kvbench evicts (ragged heads).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "datasets/json_parse.hpp"
#include "policies/context_rescoring.hpp"
#include "policies/kvpress/duo_on_the_fly.hpp"
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

class DuoAttentionPress : public Policy, public ContextRescoring {
 public:
  // A published pattern (attn_pattern), or kvpress's on-the-fly scores of the model itself.
  DuoAttentionPress(std::string name, const nlohmann::json& p, bool on_the_fly) : name_(std::move(name)), on_the_fly_(on_the_fly) {
    ratio_ = p.at("head_compression_ratio");
    if (!on_the_fly_) {
      path_ = p.at("attn_pattern").get<std::string>();
      pattern_ = read_pattern(path_);
      choose_streaming_heads();
      return;
    }
    corpus_ = p.at("corpus").get<std::string>();
    num_samples_ = p.at("num_samples");
    q_len_ = p.at("q_len");
    pattern_.sink = p.at("sink_size");
    pattern_.recent = p.at("recent_size");
    if (corpus_.empty())
      throw std::invalid_argument(name_ + " scores the model's heads on " + std::to_string(num_samples_) +
                                  " chapters of BookSum's train split (Hugging Face kmfoda/booksum, split train, column chapter), "
                                  "as kvpress's duo_attention_on_the_fly does: download it and give the file (CSV as published, or "
                                  "JSONL with a chapter field) as the parameter corpus");
  }
  std::string name() const override { return name_; }
  ContextRescoring* rescoring() override { return on_the_fly_ ? this : nullptr; }
  bool standalone() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.projections = scoring_;
    return r;
  }

  void begin(const SequenceInfo& info) override {
    if (!info.unlimited())
      throw std::invalid_argument(name_ + " sizes its heads by head_compression_ratio, not by a budget: run it with --budget full");
    if (pattern_.scores.defined() && (pattern_.scores.size(0) != info.n_layers || pattern_.scores.size(1) != info.n_kv_heads))
      throw std::invalid_argument(name_ + ": " + path_ + "/full_attention_heads.tsv scores " +
                                  std::to_string(pattern_.scores.size(0)) + " layers × " + std::to_string(pattern_.scores.size(1)) +
                                  " KV heads, the model has " + std::to_string(info.n_layers) + " × " +
                                  std::to_string(info.n_kv_heads) + ": the pattern of another model?");
    Policy::begin(info);
  }

  // The scores are the model's: computed on the first prompt, kept for the next ones in this
  // process (kvpress caches them per model name): every example's session has a policy of its own.
  std::vector<std::vector<int64_t>> scoring_inputs(const std::vector<int64_t>&, const PromptText* text) override {
    if (streaming_.defined()) return {};
    if (const std::optional<torch::Tensor> known = known_scores()) {
      pattern_.scores = *known;
      choose_streaming_heads();
      return {};
    }
    if (!text || !text->encode_with_specials)
      throw std::invalid_argument(name_ + " tokenizes its calibration chapters with the model's tokenizer, which this run does not give "
                                          "(run it through a task)");
    std::vector<std::vector<int64_t>> inputs;
    for (const std::string& chapter : duo_sampled_chapters(corpus_, num_samples_)) inputs.push_back(text->encode_with_specials(chapter));
    pattern_.scores = torch::zeros({info_.n_layers, info_.n_kv_heads}, torch::kFloat32);
    return inputs;
  }
  void begin_scoring_input(size_t) override { scoring_ = true; }

  // duo_attention_on_the_fly: each chapter's layer scores (policies/kvpress/duo_on_the_fly.hpp),
  // averaged over the chapters.
  void observe(int64_t layer, LayerCache&, const AttentionStats& stats, Phase) override {
    if (!scoring_) return;
    pattern_.scores[layer].add_(duo_layer_scores(stats.projected_queries, stats.projected_keys, stats.rotate, q_len_).cpu().div(static_cast<double>(num_samples_)));
  }

  // kvpress masks the streaming heads' tokens [sink, n − recent) once, after the prefill (a
  // `-recent_size` slice: nothing when recent_size is 0).
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (phase == Phase::kPrefillBlock) throw std::invalid_argument(name_ + " masks the prompt once: use --protocol oneshot");
    if (phase != Phase::kPrefill) return;
    scoring_ = false;
    if (!streaming_.defined()) {
      if (!pattern_.scores.defined()) throw std::invalid_argument(name_ + " needs its calibration forwards, which an InferenceSession runs; they were not run");
      choose_streaming_heads();
      remember_scores();
    }
    if (pattern_.recent == 0) return;
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

  // For tests: the (layer, KV head) scores in use (the pattern's, or the ones computed).
  const torch::Tensor& head_scores() const { return pattern_.scores; }

 private:
  // The round(size · ratio) lowest scores (Python's round: half to even); among equal scores the
  // lower (layer, head) first (numpy's argsort leaves that order unspecified).
  void choose_streaming_heads() {
    const int64_t size = pattern_.scores.numel();
    const int64_t pruned = static_cast<int64_t>(std::nearbyint(static_cast<double>(size) * ratio_));
    const torch::Tensor order = std::get<1>(pattern_.scores.reshape(-1).sort(/*stable=*/true, 0, /*descending=*/false));
    streaming_ = torch::zeros({size}, torch::kBool);
    if (pruned > 0) streaming_.index_fill_(0, order.narrow(0, 0, pruned), true);
    streaming_ = streaming_.reshape(pattern_.scores.sizes());
  }

  // Scores computed on the fly, per (model, corpus, num_samples, q_len); none for a model built in
  // memory (no name to key it by).
  struct KnownScores {
    std::mutex mutex;
    std::map<std::string, torch::Tensor> by_key;
  };
  static KnownScores& known() {
    static KnownScores k;
    return k;
  }
  std::string scores_key() const {
    if (info_.model.empty()) return "";
    return info_.model + "|" + corpus_ + "|" + std::to_string(num_samples_) + "|" + std::to_string(q_len_);
  }
  std::optional<torch::Tensor> known_scores() const {
    const std::string key = scores_key();
    if (key.empty()) return std::nullopt;
    KnownScores& k = known();
    const std::lock_guard<std::mutex> lock(k.mutex);
    const auto it = k.by_key.find(key);
    if (it == k.by_key.end()) return std::nullopt;
    return it->second;
  }
  void remember_scores() const {
    const std::string key = scores_key();
    if (key.empty()) return;
    KnownScores& k = known();
    const std::lock_guard<std::mutex> lock(k.mutex);
    if (k.by_key.size() >= 128) k.by_key.clear();  // kvpress's LRU holds 128
    k.by_key[key] = pattern_.scores.clone();
  }

  std::string name_, path_, corpus_;
  bool on_the_fly_;
  double ratio_ = 0;
  int64_t num_samples_ = 0, q_len_ = 0;
  bool scoring_ = false;
  DuoPattern pattern_;
  torch::Tensor streaming_;  // [layers, kv_heads] bool, once the scores are known
};

// kvpress:duo_attention, and `duo_attention` (a press new to kvbench).
const bool duo_attention_registered = [] {
  for (const char* name : {"kvpress:duo_attention", "duo_attention"})
    PolicyRegistration(
        {name, "Streaming heads (sinks + recent window) for the lowest-scored heads of a learned pattern, full cache for the rest",
         "Xiao et al. 2024 (arXiv 2410.10819); kvpress duo_attention_press.py",
         {params::Param::file("attn_pattern", "directory of the pattern: attn_patterns/<model>/<run>/ of mit-han-lab/duo-attention"),
          params::Param::number("head_compression_ratio", 0.0, "share of the (layer, KV head) pairs made streaming heads", 0, 1)},
         [name](const nlohmann::json& p) { return std::make_unique<DuoAttentionPress>(name, p, false); }});
  // kvpress:duo_attention_on_the_fly: DuoAttentionPress(on_the_fly_scoring=True), its experimental
  // scores of the model's own heads on BookSum chapters.
  PolicyRegistration(
      {"kvpress:duo_attention_on_the_fly",
       "DuoAttention's streaming heads chosen by kvpress's on-the-fly scores: the model's mean query and key on BookSum chapters",
       "Xiao et al. 2024 (arXiv 2410.10819); kvpress duo_attention_press.py duo_attention_on_the_fly",
       {params::Param::file("corpus", "BookSum's train split (kmfoda/booksum: the CSV, or JSONL with a chapter field)"),
        params::Param::integer("num_samples", 50, "chapters sampled (pandas' sample, random_state 42)", 1),
        params::Param::integer("q_len", 500, "positions the mean query and key are repeated over", 1),
        params::Param::integer("sink_size", 128, "first tokens a streaming head keeps (kvpress's fixed 128)", 0),
        params::Param::integer("recent_size", 256, "last tokens a streaming head keeps (kvpress's fixed 256)", 0),
        params::Param::number("head_compression_ratio", 0.0, "share of the (layer, KV head) pairs made streaming heads", 0, 1)},
       [](const nlohmann::json& p) { return std::make_unique<DuoAttentionPress>("kvpress:duo_attention_on_the_fly", p, true); }});
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
