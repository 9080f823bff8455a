// FinchPress (Corallo & Papotti 2024, "FINCH: Prompt-guided Key-Value Cache Compression", TACL;
// kvpress finch_press.py): the prompt is context + question (kvpress's query-aware run, the two
// split by a delimiter token that the model never sees); each context token scores the attention
// the question's w tokens pay it, row i (the query at position n − w + i) multiplied by n − w + i
// (normalize_scores: the tokens that row can see), averaged over the rows and the KV head's group;
// no pooling; the question itself is kept (kvpress pads it with max + 1). Each head keeps its
// n_kept best (by chunks of chunk_length with a ratio budget), and with rerotate_keys the kept keys
// take the positions 0…n_kept−1 and the answer starts at n_kept (PositionMode::kCacheSlot).
// The question's token count comes from the task (SequenceInfo::query_tokens); `window_size`
// fixes it instead where there is no question (kvbench kept, bench). Prefill only, as kvpress's.
#include <map>
#include <optional>
#include <stdexcept>

#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

class FinchPress : public Policy {
 public:
  FinchPress(std::string name, const nlohmann::json& p)
      : name_(std::move(name)),
        chunk_length_(nullable<int64_t>(p.at("chunk_length"))),
        normalize_(p.at("normalize_scores")),
        rerotate_(p.at("rerotate_keys")),
        delimiter_(p.at("delimiter_token")),
        fixed_window_(nullable<int64_t>(p.at("window_size"))) {
    if (delimiter_.empty()) throw std::invalid_argument(name_ + ": delimiter_token must not be empty");
  }
  std::string name() const override { return name_; }
  std::string query_delimiter() const override { return delimiter_; }
  PositionMode position_mode() const override { return rerotate_ ? PositionMode::kCacheSlot : PositionMode::kOriginal; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.window = window_;
    return r;
  }
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    window_ = fixed_window_.value_or(info.query_tokens);
    if (window_ < 1)
      throw std::invalid_argument(name_ + " scores the context by the question's attention, and this prompt has none: run a kvpress task "
                                  "with query_aware: true (kvpress's evaluate.py requires it), or give window_size");
    rows_.clear();
  }
  bool observes_only_to_compress() const override { return true; }  // rows_: the prefill's, read by its compress()
  void observe(int64_t layer, LayerCache&, const AttentionStats& stats, Phase phase) override {
    if (phase == Phase::kPrefill && stats.window_rows.defined()) rows_[layer] = stats.window_rows;
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    const int64_t budget = layer_budget(layer);
    if (fits_budget(cache, budget)) return;
    const int64_t n = cache.size();
    auto it = rows_.find(layer);
    if (phase != Phase::kPrefill || it == rows_.end() || it->second.size(2) != n || !cache.in_arrival_order())
      throw std::invalid_argument(name_ + " compresses a whole prompt once (kvpress: prefill only): run it under --protocol oneshot");
    const int64_t w = std::min(window_, n);
    torch::Tensor rows = it->second.narrow(1, it->second.size(1) - w, w).narrow(2, 0, n - w);  // [H, w, n − w]
    if (normalize_)
      rows = rows * torch::arange(n - w, n, rows.options()).reshape({1, w, 1});
    torch::Tensor scores = mean_over_groups(rows.mean(1), cache.kv_heads());  // [Hkv, n − w]
    const double top = scores.numel() ? scores.max().item<double>() + 1.0 : 1.0;
    scores = torch::cat({scores, torch::full({cache.kv_heads(), w}, top, scores.options())}, 1);
    cache.keep(chunk_length_ ? chunked_selection(scores, w) : top_k_slots(scores, budget));
    rows_.erase(it);
  }

 private:
  // kvpress: every chunk of chunk_length tokens keeps max(1, int(its length · (1 − r))) of its own.
  torch::Tensor chunked_selection(const torch::Tensor& scores, int64_t w) const {
    if (!info_.compression_ratio)
      throw std::invalid_argument(name_ + ": chunk_length keeps a fraction of every chunk: give the budget as ratio:<r>");
    const double keep = 1.0 - *info_.compression_ratio;
    if (!(static_cast<double>(*chunk_length_) > static_cast<double>(w) / keep))
      throw std::invalid_argument(name_ + ": chunk_length " + std::to_string(*chunk_length_) + " must exceed the window (" +
                                  std::to_string(w) + " tokens) / (1 - ratio), as kvpress asserts");
    std::vector<torch::Tensor> kept;
    const int64_t n = scores.size(1);
    for (int64_t start = 0; start < n; start += *chunk_length_) {
      const int64_t len = std::min(*chunk_length_, n - start);
      const auto k = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(len) * keep));
      kept.push_back(top_k_slots(scores.narrow(1, start, len), k) + start);
    }
    return torch::cat(kept, 1);
  }

  std::string name_;
  std::optional<int64_t> chunk_length_;
  bool normalize_, rerotate_;
  std::string delimiter_;
  std::optional<int64_t> fixed_window_;
  int64_t window_ = 0;
  std::map<int64_t, torch::Tensor> rows_;  // per layer: the question's attention rows [H, w, n]
};

params::Params finch_params() {
  using params::Param;
  return {Param::integer("chunk_length", nullptr, "tokens per chunk, each keeping its own share (needs a ratio budget); null: the whole prompt", 1).or_null(),
          Param::flag("normalize_scores", true, "each question row multiplied by the tokens it sees before averaging"),
          Param::flag("rerotate_keys", true, "kept keys re-rotated to positions 0..n_kept-1; the answer starts at n_kept"),
          Param::text("delimiter_token", "<|finch_sep|>", "special token a query-aware task puts between context and question"),
          Param::integer("window_size", nullptr, "kvbench: a fixed window of the prompt's last tokens; null: the question's tokens", 1).or_null()};
}

const bool finch_registered = [] {
  for (const std::string name : {"finch", "kvpress:finch"})
    PolicyRegistration({name, "The question's attention to the context, rows normalised by what they see; the question kept, keys re-rotated",
                        "Corallo & Papotti 2024 (TACL); kvpress finch_press.py", finch_params(),
                        [name](const nlohmann::json& p) { return std::make_unique<FinchPress>(name, p); }});
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
