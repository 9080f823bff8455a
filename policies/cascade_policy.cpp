// Cascading KV cache (cascading-kv-cache.txt §3.1, Alg. 1, App. B–C): 4 attention sinks plus a
// window of |C| tokens split into N sub-caches of |C|/N. Sub-cache i accepts one in base^(i−1)
// of the tokens the previous one evicts (base 2 by default; 3 and 4 are Table 5's
// alternatives); when it is not accepting, the incoming token replaces its newest token only if
// its attention EMA is higher, and is discarded otherwise (token selection; `token_selection:
// false` is Table 3's ablation, a static pattern). The reach is eq. 4, |C|/N·Σ base^(i−1):
// 7,680 tokens for |C| = 2048, N = 4.
// Defaults follow the official code (jeffwillette/cascading_kv_cache, CascadingKVCache):
// `eager_fill` lets every sub-cache accept until |C| non-sink tokens have been seen, so the cache
// holds every token until it is full; ties in cases 3–4 go to the incoming token (>=).
// Scores: μ ← γ·μ + (1 − γ)·s with the reference's fixed γ = 0.9999999 (`gamma_from_window: true`
// gives App. B's exp(−N·ln(100)/|C|)), s the attention the slot receives reduced over all query
// heads by ρ = mean | median | max (`head_reduce`, §3.1 / Table 5).
// Selection is homogeneous (App. C): every head keeps the same tokens, which PositionMode::
// kCacheSlot needs (positions are the slot order 0..n−1, as StreamingLLM's).
// Budget: |C| = the budget; the sinks come on top (`sinks_on_top`, the paper's accounting: "a window
// of 1024 has 1028 tokens"), so layer_budget() = budget + sinks; with `sinks_on_top: false` they
// count inside it.
// Implementation: the cascade is kept as logical circular buffers of token ids (cascade_book.hpp)
// on the host; Alg. 1's structure depends on sizes only, so the host runs it and only the contests
// of cases 3–4 read scores, on the cache's device (nothing is read back); compress() evicts, with
// the same slots on every head, the positions that left the book. The book's order (sinks, then the last sub-cache … the first)
// is position order, which is the order kCacheSlot rotates keys by (arrival rank), so the cache
// may keep its slots in any order (SlotOrder::kAny): an evicting step moves O(evicted · d), as the
// paper's physical circular buffers overwrite one slot in O(d).
// Blocks of T > 1 queries (one-shot or streamed prompts): the EMA takes the block's mean attention
// with weight 1 − γ^c, c the queries of the block that saw the slot, which is exact for T = 1;
// Alg. 1 then runs token by token over the block's new tokens.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "policies/cascade_book.hpp"
#include "policies/registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies {
namespace {

enum class CascadeReduce { kMean, kMedian, kMax };

CascadeReduce parse_cascade_reduce(const std::string& name) {
  if (name == "mean") return CascadeReduce::kMean;
  if (name == "median") return CascadeReduce::kMedian;
  if (name == "max") return CascadeReduce::kMax;
  throw std::logic_error("cascade: head_reduce '" + name + "' is not a declared choice");
}

int64_t parse_base(const std::string& name) {
  if (name == "pow2") return 2;
  if (name == "pow3") return 3;
  if (name == "pow4") return 4;
  throw std::logic_error("cascade: cascade_function '" + name + "' is not a declared choice");
}

class CascadePolicy : public Policy {
 public:
  explicit CascadePolicy(const nlohmann::json& p)
      : sinks_(p["sinks"]),
        n_cascades_(p["cascades"]),
        base_(parse_base(p["cascade_function"])),
        sinks_on_top_(p["sinks_on_top"]),
        token_selection_(p["token_selection"]),
        reduce_(parse_cascade_reduce(p["head_reduce"])),
        gamma_param_(p["gamma"]),
        gamma_from_window_(p["gamma_from_window"]),
        eager_fill_(p["eager_fill"]) {
  }

  std::string name() const override { return "cascade"; }
  PositionMode position_mode() const override { return PositionMode::kCacheSlot; }
  // The book tracks tokens by position and kCacheSlot rotates by arrival rank, so slots may move.
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.column_sums = token_selection_;
    return r;
  }

  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    books_.clear();
    token_ids_.clear();
    unlimited_ = info.unlimited();
    if (unlimited_) return;
    const int64_t sinks = sinks_on_top_ ? sinks_ : std::min<int64_t>(sinks_, std::max<int64_t>(0, info.budget - 1));
    window_ = sinks_on_top_ ? info.budget : info.budget - sinks;
    sinks_used_ = sinks;
    cascades_used_ = std::min<int64_t>(n_cascades_, window_);
    capacities_ = cascade::split_capacity(window_, cascades_used_);
    gamma_ = gamma_from_window_ ? std::exp(-static_cast<double>(cascades_used_) * std::log(100.0) / window_)
                                : gamma_param_;
  }

  int64_t layer_budget(int64_t) const override {
    if (unlimited_) return info_.budget;
    return sinks_on_top_ ? info_.budget + sinks_used_ : info_.budget;
  }

  void observe(int64_t, LayerCache& cache, const AttentionStats& stats, Phase) override {
    if (!token_selection_ || !stats.column_sums.defined()) return;
    torch::Tensor counts = stats.column_counts.to(torch::kFloat64);  // [n], on the cache's device
    torch::Tensor mean = stats.column_sums.to(torch::kFloat64) / counts.clamp_min(1.0).unsqueeze(0);
    torch::Tensor s;  // ρ over all query heads -> [n]
    switch (reduce_) {
      case CascadeReduce::kMean: s = mean.mean(0); break;
      case CascadeReduce::kMedian: s = std::get<0>(mean.median(0)); break;
      case CascadeReduce::kMax: s = std::get<0>(mean.max(0)); break;
    }
    torch::Tensor decay = torch::pow(gamma_, counts);  // γ^c; c = 1 for a decoded token
    torch::Tensor ema = cache.state("ema", {}, torch::kFloat64);            // same value on every KV head
    torch::Tensor updated = decay * ema.select(0, 0) + (1 - decay) * s;
    ema.copy_(updated.unsqueeze(0).expand_as(ema));
  }

  // Alg. 1 without reading the device: the book runs on the host over token ids (its structure
  // depends on sizes only), each id's position is a 0-dim tensor on the cache's device, and a
  // contest (cases 3–4) is decided there by score; the positions that left the book are evicted
  // by one comparison with the cache's. (On the CPU too: cheaper than reading the EMA back.)
  void compress(int64_t layer, LayerCache& cache, Phase) override {
    if (unlimited_) return;
    cascade::Book& book = book_for(layer);
    TokenIds& tokens = token_ids_[layer];
    const int64_t n = cache.size(), known = book.size();
    if (known > n) throw std::logic_error("cascade: the cache lost tokens the policy still tracks");
    const torch::Tensor positions = cache.positions().select(0, 0);  // every head holds the same tokens
    const torch::Tensor ema = token_selection_ ? cache.state("ema", {}, torch::kFloat64).select(0, 0) : torch::Tensor();
    const double lowest = -std::numeric_limits<double>::infinity();
    auto score = [&](const torch::Tensor& position) { return torch::where(positions == position, ema, lowest).amax(); };
    cascade::Referee referee = [&](const cascade::Token& incoming, const cascade::Token& newest) {
      const torch::Tensor a = tokens.take(incoming.position), b = tokens.take(newest.position);
      const torch::Tensor incoming_stays = score(a) >= score(b);  // ties to the incoming token
      return cascade::Contest{{tokens.add(torch::where(incoming_stays, a, b))}, {tokens.add(torch::where(incoming_stays, b, a))}};
    };
    std::vector<torch::Tensor> gone;
    const torch::Tensor fresh = positions.narrow(0, known, n - known).clone();  // the forward's new tokens, oldest first
    for (int64_t j = 0; j < n - known; ++j)
      if (auto left = book.insert({tokens.add(fresh[j])}, referee)) gone.push_back(tokens.take(left->position));
    if (gone.empty()) return;
    const auto e = static_cast<int64_t>(gone.size());
    torch::Tensor leaving = positions.unsqueeze(1).eq(torch::stack(gone).unsqueeze(0)).any(1).unsqueeze(0);  // [1, n]
    // kAny: O(evicted), the holes are refilled from the tail; kArrival: the survivors, in slot order.
    if (cache.slot_order() == SlotOrder::kAny) cache.evict(first_true_columns(leaving, e));
    else cache.keep(first_true_columns(leaving.logical_not(), n - e));
  }

  // For tests and reports: eq. 4's approximate context length under the resolved budget.
  int64_t approximate_context_length() const { return cascade::approximate_context_length(capacities_, base_); }

 private:
  // The book's token ids and their positions (0-dim tensors on the cache's device).
  struct TokenIds {
    int64_t next = 0;
    std::map<int64_t, torch::Tensor> position;
    int64_t add(torch::Tensor p) {
      position.emplace(next, std::move(p));
      return next++;
    }
    torch::Tensor take(int64_t id) {  // the id leaves (it was replaced or left the book)
      auto it = position.find(id);
      if (it == position.end()) throw std::logic_error("cascade: unknown token id " + std::to_string(id));
      torch::Tensor p = std::move(it->second);
      position.erase(it);
      return p;
    }
  };

  cascade::Book& book_for(int64_t layer) {
    auto it = books_.find(layer);
    if (it == books_.end()) it = books_.emplace(layer, cascade::Book(sinks_used_, capacities_, base_, token_selection_, eager_fill_)).first;
    return it->second;
  }

  int64_t sinks_, n_cascades_, base_;
  bool sinks_on_top_, token_selection_;
  CascadeReduce reduce_;
  double gamma_param_;
  bool gamma_from_window_, eager_fill_;
  bool unlimited_ = false;
  int64_t window_ = 0, sinks_used_ = 0, cascades_used_ = 0;
  std::vector<int64_t> capacities_;
  double gamma_ = 0;
  std::map<int64_t, cascade::Book> books_;  // per layer
  std::map<int64_t, TokenIds> token_ids_;   // per layer
};

const PolicyRegistration registration({
    "cascade",
    "Cascading sink cache: 4 sinks + N sub-caches accepting 1/2^(i-1) of the previous one's evictions, "
    "EMA-attention token selection, positions by cache slot",
    "Cascading KV cache (cascading-kv-cache.txt §3.1 eq. 4, Alg. 1, App. B gamma, App. C homogeneous heads; "
    "Tables 3, 5 ablations); defaults follow the official code, jeffwillette/cascading_kv_cache",
    {params::Param::integer("sinks", 4, "attention sinks (§4: the first 4 tokens)", 0),
     params::Param::integer("cascades", 4, "N, the number of sub-caches", 1),
     params::Param::choice("cascade_function", "pow2", {"pow2", "pow3", "pow4"}, "sub-cache i accepts 1/base^(i-1) (Table 5)"),
     params::Param::flag("sinks_on_top", true, "the sinks come in addition to the budget (§4)"),
     params::Param::flag("token_selection", true, "false: Table 3's w/o token selection (static pattern)"),
     params::Param::choice("head_reduce", "mean", {"mean", "median", "max"}, "ρ, the reduction over heads (Table 5)"),
     params::Param::number("gamma", 0.9999999, "γ of the attention EMA (the reference's fixed value)", 0, 1),
     params::Param::flag("gamma_from_window", false, "γ = exp(−N·ln 100/|C|) (App. B)"),
     params::Param::flag("eager_fill", true, "every sub-cache accepts until |C| non-sink tokens were seen (the reference)")},
    [](const nlohmann::json& p) { return std::make_unique<CascadePolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
