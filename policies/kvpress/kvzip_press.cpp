// KVzipPress (kvpress/presses/kvzip_press.py, after Kim et al., "KVzip: Query-Agnostic KV Cache
// Compression with Context Reconstruction", arXiv 2505.23416): after the prompt's prefill the model
// is asked to repeat it, chunk by chunk (the session runs each input after the prompt and rolls it
// back: policies/context_rescoring.hpp). Chunk i's input is a repeat instruction (the first: "Repeat
// the previous context exactly."; the next: "... starting with" and the previous chunk's last
// prev_postfix_size tokens), the chat template's tail, then the chunk's tokens. A (KV head, token)
// scores the largest attention any query of that input on the head's group pays it, in a softmax
// over the sinks, the chunk and the input alone (KVzip+: each row divided by ‖h‖ of its query's
// hidden state, each column multiplied by ‖v W_o‖ of the query head). The first n_sink tokens start
// at 1. The budget is global: the int(L·Hkv·n·r) lowest scores over every layer are evicted
// (layerwise: int(Hkv·n·r) per layer), each layer's as its lowest over (head, token).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "policies/kvpress/kvzip_press.hpp"
#include "policies/kvpress/pair_pruning.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies::kvpress {
namespace {

// kvpress's probe of the chat template: a dummy user message with a separator, split there.
constexpr const char* kDummyContext = "dummy context";
constexpr const char* kFirstRepeat = "\n\nRepeat the previous context exactly.";
constexpr const char* kNextRepeat = "\n\nRepeat the part of the previous context exactly, starting with";
constexpr int64_t kScoreElements = int64_t{1} << 24;  // logits per chunk of repeat queries

}  // namespace

KvzipPress::KvzipPress(std::string name, const nlohmann::json& p)
    : RescoringPress(std::move(name), "by forwards that repeat it (kvpress: after the prefill)"), layerwise_(p.at("layerwise")),
      n_sink_(p.at("n_sink")), plus_(p.at("kvzip_plus_normalization")), chunk_size_(p.at("chunk_size")), postfix_(p.at("prev_postfix_size")) {}

std::vector<std::vector<int64_t>> KvzipPress::scoring_inputs(const std::vector<int64_t>& prompt, const PromptText* text) {
  if (!text)
    throw std::invalid_argument(press_name() + " writes its repeat prompts with the model's tokenizer and chat template, which this run "
                                        "does not give (run it through a task)");
  // kvpress's split of the model's chat template: the prefix before a user message, the tail after.
  std::string prefix, suffix = "\n";  // without a chat template
  const std::string separator = "\n" + std::string(std::char_traits<char>::length(kDummyContext), '#');
  if (const std::optional<std::string> rendered = text->chat(kDummyContext + separator)) {
    const size_t cut = rendered->find(separator);
    if (cut == std::string::npos || rendered->find(separator, cut + 1) != std::string::npos)
      throw std::invalid_argument(press_name() + ": the model's chat template does not render the probe message once (kvpress splits it there)");
    const std::string context = rendered->substr(0, cut);
    prefix = context.substr(0, context.find(kDummyContext));
    suffix = rendered->substr(cut + separator.size());
  }
  const int64_t prefix_length = static_cast<int64_t>(text->encode(prefix).size());
  const std::vector<int64_t> suffix_ids = text->encode(suffix);
  const int64_t n = static_cast<int64_t>(prompt.size()), start = std::min(prefix_length, n);
  std::vector<std::vector<int64_t>> inputs;
  chunks_.clear();
  for (int64_t from = start; from < n || (from == start && chunks_.empty()); from += chunk_size_) {
    const int64_t to = std::min(n, from + chunk_size_);
    std::vector<int64_t> input = text->encode(chunks_.empty() ? kFirstRepeat : kNextRepeat);
    if (!chunks_.empty()) {
      const Chunk& previous = chunks_.back();
      // Python's [-0:] is the whole chunk: prev_postfix_size 0 repeats all of it.
      const int64_t from_previous = postfix_ == 0 ? previous.begin : std::max(previous.begin, previous.end - postfix_);
      input.insert(input.end(), prompt.begin() + from_previous, prompt.begin() + previous.end);
    }
    input.insert(input.end(), suffix_ids.begin(), suffix_ids.end());
    input.insert(input.end(), prompt.begin() + from, prompt.begin() + to);
    chunks_.push_back({from, to});
    inputs.push_back(std::move(input));
  }
  return inputs;
}

void KvzipPress::observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) {
  if (!in_scoring() || info_.unlimited()) return;
  const int64_t n = info_.prompt_len, T = stats.n_queries, kv = cache.kv_heads(), H = info_.n_heads, g = H / kv;
  if (scores_.empty()) {  // score_val: 0, the first n_sink tokens 1 (one tensor per layer)
    for (int64_t l = 0; l < info_.n_layers; ++l) {
      scores_.push_back(torch::zeros({kv, n}));
      scores_.back().narrow(1, 0, std::min(n_sink_, n)).fill_(1.0);
    }
  }
  const Chunk& chunk = chunks_.at(scoring_input());
  const int64_t sink = std::min(n_sink_, chunk.begin), width = chunk.end - chunk.begin, m = sink + width + T;
  // On the cache's device: the sinks, the chunk and the repeat input [kv, m, d], in float32.
  auto columns = [&](const torch::Tensor& x) {
    return torch::cat({x.narrow(1, 0, sink), x.narrow(1, chunk.begin, width), x.narrow(1, n, T)}, 1).to(torch::kFloat32);
  };
  const torch::Tensor keys = columns(cache.keys());
  const double root_d = std::sqrt(static_cast<double>(cache.head_dim()));
  const torch::Tensor queries = stats.queries.to(keys.device(), torch::kFloat32).view({kv, g, T, cache.head_dim()});
  const auto on_device = keys.options();
  torch::Tensor column_scale, row_scale;  // KVzip+
  if (plus_) {
    const torch::Tensor values = columns(cache.values());
    const torch::Tensor wo = stats.output_projection.to(keys.device(), torch::kFloat32).t().view({kv, g, cache.head_dim(), -1});
    column_scale = torch::empty({kv, g, 1, m}, on_device);
    for (int64_t h = 0; h < kv; ++h)
      for (int64_t j = 0; j < g; ++j) column_scale[h][j][0].copy_(values[h].matmul(wo[h][j]).norm(2, -1));
    row_scale = stats.hidden_states.to(keys.device(), torch::kFloat32).norm(2, -1).reciprocal().view({1, 1, T, 1});
  }
  const int64_t rows = std::clamp<int64_t>(kScoreElements / std::max<int64_t>(1, kv * g * m), 1, T);
  torch::Tensor best = torch::full({kv, width}, -INFINITY, on_device);
  for (int64_t t0 = 0; t0 < T; t0 += rows) {
    const int64_t len = std::min(rows, T - t0);
    torch::Tensor logits = queries.narrow(2, t0, len).matmul(keys.transpose(1, 2).unsqueeze(1)) / root_d;
    // The repeat input attends causally to itself (kvpress adds the dtype's lowest number).
    const auto index = on_device.dtype(torch::kInt64);
    const torch::Tensor q = torch::arange(t0, t0 + len, index).view({len, 1}), j = torch::arange(T, index).view({1, T});
    logits.narrow(3, sink + width, T).add_((j > q).to(torch::kFloat32) * std::numeric_limits<float>::lowest());
    torch::Tensor a = torch::softmax(logits, -1);
    if (plus_) a = a * row_scale.narrow(2, t0, len) * column_scale;
    best = torch::maximum(best, a.narrow(3, sink, width).amax({1, 2}));  // over the group and the queries
  }
  scores_[layer].narrow(1, chunk.begin, width).copy_(best);  // kept on the host: the plan sorts them there
}

StatsRequest KvzipPress::scoring_wants() const {
  StatsRequest r;
  r.queries = true;
  r.hidden_states = r.output_projection = plus_;
  return r;
}

void KvzipPress::forget() {
  chunks_.clear();
  scores_.clear();
  pruned_.clear();
}

torch::Tensor KvzipPress::kept_positions(int64_t layer, int64_t head, int64_t) { return kept_of_head(pruned_[layer], head, info_.prompt_len); }

std::vector<std::vector<int64_t>> KvzipPress::plan_with(const SequenceInfo& info) {
  PairPruning pruning = prune_lowest_pairs(scores_, info, layerwise_);
  pruned_ = std::move(pruning.pruned);
  return pruning.kept;
}

params::Params kvzip_params(bool plus) {
  return {params::Param::flag("layerwise", false, "the budget per layer (int(Hkv·n·r) each) instead of over every layer"),
          params::Param::integer("n_sink", 4, "first tokens that score 1 and stay in every chunk's attention", 0),
          params::Param::flag("kvzip_plus_normalization", plus, "KVzip+: rows divided by ‖h‖, columns multiplied by ‖v W_o‖"),
          params::Param::integer("chunk_size", 2048, "context tokens repeated per forward (kvpress: prepare()'s default)", 1),
          params::Param::integer("prev_postfix_size", 8, "tokens of the previous chunk a later repeat prompt starts with", 0)};
}

namespace {

const bool kvzip_registered = [] {
  for (const auto& [name, plus] : std::vector<std::pair<std::string, bool>>{{"kvzip", false}, {"kvpress:kvzip", false}, {"kvpress:kvzip_plus", true}})
    PolicyRegistration({name,
                        std::string("KVzip") + (plus ? "+" : "") +
                            ": the model repeats the prompt; a token's score is the most attention any repeat query pays it; a global budget",
                        "Kim et al. 2025 (arXiv 2505.23416); kvpress kvzip_press.py", kvzip_params(plus),
                        [name = name](const nlohmann::json& p) { return std::make_unique<KvzipPress>(name, p); },
                        "its plan sorts every layer's scores on the host, once per prompt"});
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
