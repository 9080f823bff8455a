// R-KV (Cai et al., 2025, "R-KV: Redundancy-aware KV Cache Compression for Reasoning Models"), as
// its official code Zefan-Cai/R-KV @ d15c9767: R1KV.update_kv (rkv/compression/r1_kv.py), its
// scores (rkv/utils.py compute_attention_scores, cal_similarity), the query cache of the patched
// attention and the step-level trigger (rkv/modeling.py), the settings of run_math.py.
//
// Per layer a query cache holds the last `window_size` queries (after RoPE) across forwards. The
// prompt's forward compresses when the cache reaches the budget; later a forward compresses when
// the position it feeds is a multiple of `divide_length` (or, with divide_method newline, when the
// token it feeds is a newline token), and never from a `</think>` on with compression_content
// think. Compressing a cache of n ≥ budget tokens, per KV head:
//   importance = max-pool (kernel_size, over slots) of the mean over the cached queries of the
//                softmax, over all slots but the last window_size, of the attention logits
//                reduced over the head's query group (max);
//   redundancy = softmax over slots of the column means of the keys' cosine matrix, whose diagonal
//                is zeroed and, in each row, the last slot (retain_direction first: the first) with
//                cosine above the threshold — slot 0 where none is;
//   score      = mix_lambda · importance − (1 − mix_lambda) · redundancy;
// it keeps the budget − window_size best slots in descending score order, then the last
// window_size slots: the cache holds that order (slot neighbourhoods feed the next max pooling).
// docs/policies-baselines.md lists where kvbench differs (a per-sequence trigger counter; float32 scores).
#include <cmath>
#include <map>

#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

class RkvPolicy : public Policy {
 public:
  explicit RkvPolicy(const nlohmann::json& p)
      : window_(p.at("window_size")),
        kernel_(p.at("kernel_size")),
        lambda_(p.at("mix_lambda")),
        threshold_(p.at("similarity_threshold")),
        retain_first_(p.at("retain_direction") == "first"),
        pool_max_(p.at("gqa_pooling") == "max"),
        on_newline_(p.at("divide_method") == "newline"),
        divide_length_(p.at("divide_length")),
        think_only_(p.at("compression_content") == "think"),
        newline_ids_(p.at("newline_token_ids").get<std::vector<int64_t>>()),
        think_end_ids_(p.at("think_end_token_ids").get<std::vector<int64_t>>()) {
    // max_pool1d with padding kernel // 2 keeps the length only for odd kernels (R-KV fails otherwise).
    if (kernel_ % 2 == 0) throw std::invalid_argument("rkv: kernel_size must be odd, got " + std::to_string(kernel_));
    if (on_newline_ && newline_ids_.empty())
      throw std::invalid_argument("rkv: divide_method newline needs newline_token_ids (run_math.py: the last id of "
                                  "the tokenizer's encoding of \"\\n\", \".\\n\", \")\\n\", \"\\n\\n\", \".\\n\\n\", \")\\n\\n\")");
    if (think_only_ && think_end_ids_.empty())
      throw std::invalid_argument("rkv: compression_content think needs think_end_token_ids (the id of \"</think>\")");
  }
  std::string name() const override { return "rkv"; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.queries = true;
    return r;
  }
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    if (!info.unlimited() && info.budget <= window_)  // R1KV asserts budget - window_size > 0
      throw std::invalid_argument("rkv: the budget (" + std::to_string(info.budget) + ") must exceed window_size (" +
                                  std::to_string(window_) + ")");
    layers_.clear();
  }
  int64_t layer_budget(int64_t layer) const override {
    // Between step-length triggers a layer grows by up to divide_length − 1 tokens; newline and
    // think triggers bound nothing (a trace without newlines, or after </think>, is never cut).
    if (info_.unlimited() || on_newline_ || think_only_) return kUnlimitedTokens;
    return info_.budget + divide_length_ - 1;
  }

  void observe(int64_t layer, LayerCache&, const AttentionStats& stats, Phase) override {
    LayerState& s = layers_[layer];
    const int64_t T = stats.queries.size(1);
    torch::Tensor q = s.queries.defined() ? torch::cat({s.queries, stats.queries}, 1) : stats.queries;
    s.queries = q.narrow(1, std::max<int64_t>(0, q.size(1) - window_), std::min<int64_t>(window_, q.size(1))).clone();
    const int64_t first = s.fed;  // the position this forward feeds first
    s.fed += T;
    if (first == 0) {  // the prompt's forward (rkv/modeling.py: compression None)
      s.compress_now = true;
      return;
    }
    // CausalLM_forward sets the flag from the token the previous forward predicted: the one fed now.
    const bool token_needed = on_newline_ || think_only_;
    if (token_needed && (!stats.tokens || stats.tokens->empty()))
      throw std::logic_error("rkv: the newline and think triggers need the forward's token ids");
    const int64_t fed_token = token_needed ? stats.tokens->front() : -1;
    if (think_only_ && !s.after_think) s.after_think = contains(think_end_ids_, fed_token);
    s.compress_now = !s.after_think && (on_newline_ ? contains(newline_ids_, fed_token) : first % divide_length_ == 0);
  }

  void compress(int64_t layer, LayerCache& cache, Phase) override {
    auto it = layers_.find(layer);
    if (info_.unlimited() || it == layers_.end() || !it->second.compress_now) return;
    if (cache.size() < info_.budget) return;
    cache.keep_reordered(selection(cache, it->second.queries));
  }

 private:
  struct LayerState {
    torch::Tensor queries;  // [heads, ≤ window, head_dim]: the last window_size queries
    int64_t fed = 0;        // tokens fed so far (rkv/modeling.py's `length`, per sequence)
    bool compress_now = false;
    bool after_think = false;
  };

  static bool contains(const std::vector<int64_t>& ids, int64_t id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  }

  // [kv_heads, budget]: the slots to keep, best scores first, then the window.
  torch::Tensor selection(const LayerCache& cache, const torch::Tensor& queries) const {
    const torch::Tensor K = cache.keys().to(torch::kFloat32);
    const int64_t kvh = K.size(0), n = K.size(1), d = K.size(2), past = n - window_;
    const torch::Tensor q = queries.to(K.device());
    const int64_t group = q.size(0) / kvh, w = q.size(1);
    // compute_attention_scores: per query head, then reduced over the group.
    torch::Tensor logits = torch::matmul(q.view({kvh, group, w, d}), K.unsqueeze(1).transpose(2, 3)) / std::sqrt(static_cast<double>(d));
    logits = pool_max_ ? std::get<0>(logits.max(1)) : logits.mean(1);  // [kvh, w, n]
    torch::Tensor importance = torch::softmax(logits.narrow(2, 0, past), -1).mean(1);  // [kvh, past]
    importance = torch::max_pool1d(importance.unsqueeze(0), {kernel_}, {1}, {kernel_ / 2}).squeeze(0);
    const torch::Tensor redundancy = redundancy_scores(K).narrow(1, 0, past);
    const torch::Tensor score = importance * lambda_ - redundancy * (1 - lambda_);
    const torch::Tensor best = std::get<1>(score.topk(info_.budget - window_, -1, /*largest=*/true, /*sorted=*/true));
    const torch::Tensor window = torch::arange(past, n, best.options()).expand({kvh, window_});
    return torch::cat({best, window}, 1);
  }

  // cal_similarity: [kvh, n]. Row blocks bound the cosine matrix at kMaxElements floats (R-KV
  // materialises all n × n; the column means are the same).
  torch::Tensor redundancy_scores(const torch::Tensor& K) const {
    constexpr int64_t kMaxElements = int64_t{1} << 24;
    const int64_t kvh = K.size(0), n = K.size(1);
    const torch::Tensor unit = K / (K.norm(2, -1, /*keepdim=*/true) + 1e-8);
    const torch::Tensor columns = torch::arange(n, K.options().dtype(torch::kInt64));
    torch::Tensor sums = torch::zeros({kvh, n}, K.options());
    const int64_t rows = std::max<int64_t>(1, kMaxElements / std::max<int64_t>(1, kvh * n));
    for (int64_t r0 = 0; r0 < n; r0 += rows) {
      const int64_t r = std::min(rows, n - r0);
      torch::Tensor cos = torch::matmul(unit.narrow(1, r0, r), unit.transpose(1, 2));  // [kvh, r, n]
      const torch::Tensor diagonal = torch::arange(r0, r0 + r, columns.options()).view({1, r, 1}).expand({kvh, r, 1});
      cos.scatter_(2, diagonal, 0.0);
      // Per row: the last (first) column above the threshold, 0 where none (torch.where(mask, j, 0)).
      const torch::Tensor marked = torch::where(cos > threshold_, columns.view({1, 1, n}), torch::zeros_like(columns).view({1, 1, n}));
      const torch::Tensor retained = retain_first_ ? std::get<0>(marked.min(-1, true)) : std::get<0>(marked.max(-1, true));
      cos.scatter_(2, retained, 0.0);
      sums += cos.sum(1);
    }
    return torch::softmax(sums / static_cast<double>(n), -1);
  }

  int64_t window_, kernel_;
  double lambda_, threshold_;
  bool retain_first_, pool_max_, on_newline_;
  int64_t divide_length_;
  bool think_only_;
  std::vector<int64_t> newline_ids_, think_end_ids_;
  std::map<int64_t, LayerState> layers_;
};

using params::Param;

const PolicyRegistration registration({
    "rkv",
    "R-KV: attention importance minus key redundancy, recomputed every divide_length generated tokens",
    "R-KV (Cai et al. 2025; Zefan-Cai/R-KV rkv/compression/r1_kv.py, rkv/modeling.py)",
    {Param::integer("window_size", 8, "recent tokens always kept; their queries (the query cache) score the rest", 1),
     Param::integer("kernel_size", 7, "max-pooling width over slots of the importance (odd)", 1),
     Param::number("mix_lambda", 0.07, "weight of importance against redundancy (run_math.py's default)", 0, 1),
     Param::number("similarity_threshold", 0.5, "key cosine above which a token counts as redundant (cal_similarity)", -1, 1),
     Param::choice("retain_direction", "last", {"last", "first"},
                   "which similar neighbour of each key is exempted from its redundancy"),
     Param::choice("gqa_pooling", "max", {"max", "mean"}, "reduction of a KV head's query group's logits"),
     Param::choice("divide_method", "step_length", {"step_length", "newline"},
                   "when a generated token triggers a compression: at multiples of divide_length, or when a newline is fed"),
     Param::integer("divide_length", 128, "positions between step_length compressions", 1),
     Param::choice("compression_content", "all", {"all", "think"}, "think: no compression from </think> on"),
     Param::integers("newline_token_ids", nlohmann::json::array(), "token ids that trigger divide_method newline", 0),
     Param::integers("think_end_token_ids", nlohmann::json::array(), "token ids of </think> (compression_content think)", 0)},
    [](const nlohmann::json& p) { return std::make_unique<RkvPolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
