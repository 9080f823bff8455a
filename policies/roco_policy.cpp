// RoCo: robust cache omission (roco-easykv.txt §4–5), and the unified view it is built on: an
// eviction policy = an importance score (policies/importance_scores.hpp: random, recency, AAS,
// AQAS, LTAS, MAS) × an eviction scope (policies/eviction_scope.hpp: none, window, std, easykv).
// When the cache holds more than the budget B, the lowest-importance slots inside the scope are
// evicted. RoCo as its official code runs it (the default, by the fidelity rule: the code over the
// paper's text) = MAS × easykv, DRSY/EasyKV's generate() with kv_policy "roco" (below). RoCo as the
// paper describes it = MAS × std (`scope: std`): the r = B/2 slots with the largest standard
// deviation of received attention are excluded (§5.1.5: r = B/2), and the lowest mean attention
// is evicted.
// Table 1's policies are points of the same grid (docs/policies-papers.md):
//   H2O = aas × window, ScissorHands = aqas × window, TOVA = ltas × none (shared_heads),
//   StreamLLM = recency × none with 4 sinks, Random = random × none.
// Block-wise eviction (§5.3, Table 6): a streamed block of b tokens is encoded and b slots are
// freed per step (protocol `stream`, block b); `evict_block` frees at least that many slots per
// eviction during decoding too, so eviction runs once every `evict_block` tokens.
// Eviction is per KV head (each head its own tokens, as H2O/RoCo) unless `shared_heads`, which
// scores the mean over heads and keeps the same tokens everywhere (TOVA).
// Removing k tokens at once equals k single evictions: the scope (top-r std, last r) of the
// remaining slots does not change while slots inside the scope are removed.
// Scope easykv follows the EasyKV code (DRSY/EasyKV generate(), kv_policy "roco"):
// statistics are collected only from the first forward that overflows the budget
// (keep_attention=False; `easykv_keep_attention: true` collects them from the start); while the
// prompt is encoded the first `easykv_sinks` (temp_length, 4) slots are protected and the
// candidates are max(B − ⌊0.1·B⌋ − sinks, evicted) (recent_ratio 0.1); while decoding no sink is
// protected and the candidates are B − ⌊0.3·B⌋ (its hard-coded 0.3).
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "policies/eviction_scope.hpp"
#include "policies/importance_scores.hpp"
#include "policies/registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies {
namespace {

class RocoPolicy : public Policy {
 public:
  explicit RocoPolicy(const nlohmann::json& p)
      : importance_(parse_importance(p["importance"])),
        scope_(parse_scope(p["scope"])),
        scope_ratio_(p["scope_ratio"]),
        sinks_(p["sinks"]),
        evict_block_(p["evict_block"]),
        shared_heads_(p["shared_heads"]),
        easykv_prompt_ratio_(p["easykv_prompt_recent_ratio"]),
        easykv_decode_ratio_(p["easykv_decode_recent_ratio"]),
        easykv_protect_last_(p["easykv_protect_last"]),
        easykv_sinks_(p["easykv_sinks"]),
        easykv_keep_attention_(p["easykv_keep_attention"]),
        reduce_(parse_head_reduce(p["head_reduce"])) {
    if (scope_ratio_ < 0 || scope_ratio_ > 1) throw std::invalid_argument("roco: scope_ratio must be in [0, 1]");
    for (double ratio : {easykv_prompt_ratio_, easykv_decode_ratio_})
      if (ratio < 0 || ratio > 1)
        throw std::invalid_argument("roco: easykv_prompt_recent_ratio and easykv_decode_recent_ratio must be in [0, 1]");
    if (sinks_ < 0 || evict_block_ < 1 || easykv_protect_last_ < 0 || easykv_sinks_ < 0)
      throw std::invalid_argument("roco: sinks, easykv_sinks and easykv_protect_last must be >= 0, evict_block >= 1");
    ledger_ = ledger_for(importance_);
    if (needs_std(scope_)) ledger_.sums = ledger_.squares = true;
  }

  std::string name() const override { return "roco"; }
  // Scores are per-slot state; compress() reads ages through arrival_order().
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override { return ledger_.request(); }

  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    evictions_ = 0;
  }

  void observe(int64_t, LayerCache& cache, const AttentionStats& stats, Phase) override {
    // EasyKV (keep_attention=False) accumulates only once the cache holds more than its budget.
    if (scope_ == Scope::kEasyKV && !easykv_keep_attention_ && cache.size() <= info_.budget) return;
    ledger_.update(cache, stats, reduce_);
  }

  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    const int64_t n = cache.size(), budget = info_.budget;
    if (n <= budget) return;
    const int64_t target = std::max<int64_t>(0, std::min(budget, n - evict_block_));
    const int64_t evict = n - target;
    std::mt19937_64 rng(info_.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(layer) * 1000003u + evictions_++);
    torch::Tensor importance = importance_scores(importance_, cache, rng);  // [kvh, n]
    torch::Tensor std_dev = needs_std(scope_) ? attention_std(cache) : torch::Tensor();
    // The scopes and tie rules below read slots as arrival order (sinks first, the last r, ties to
    // the older): once slots have moved (kAny) everything is taken into arrival order and the
    // choice mapped back. Random draws are dealt out in arrival order, as on an ordered cache.
    torch::Tensor arrival;
    if (!cache.in_arrival_order()) {
      arrival = cache.arrival_order().expand({cache.kv_heads(), n});
      if (importance_ != Importance::kRandom) importance = importance.gather(1, arrival);
      if (std_dev.defined()) std_dev = std_dev.gather(1, arrival);
    }
    if (shared_heads_) {
      importance = importance.mean(0, /*keepdim=*/true);
      if (std_dev.defined()) std_dev = std_dev.mean(0, /*keepdim=*/true);
    }
    ScopeConfig config;
    config.scope = scope_;
    config.sinks = sinks_;
    config.protect = static_cast<int64_t>(std::floor(scope_ratio_ * static_cast<double>(budget)));
    config.easykv_protect_last = easykv_protect_last_;
    if (scope_ == Scope::kEasyKV) {
      // EasyKV's encoding loop protects temp_length sinks and uses recent_ratio (0.1); its decoding
      // loop protects none and uses 0.3.
      const bool decoding = phase == Phase::kDecode;
      config.sinks = decoding ? 0 : easykv_sinks_;
      const double ratio = decoding ? easykv_decode_ratio_ : easykv_prompt_ratio_;
      config.easykv_candidates =
          budget - static_cast<int64_t>(std::floor(ratio * static_cast<double>(budget))) - config.sinks;
    }
    torch::Tensor scope = eviction_scope(config, importance.size(0), n, evict, importance.device(), std_dev);
    torch::Tensor doomed = lowest_in_scope(importance, scope, evict);
    if (arrival.defined()) doomed = arrival.narrow(0, 0, doomed.size(0)).gather(1, doomed);
    cache.evict(doomed);  // kAny: O(evicted) slots move
  }

 private:
  // Per row, the `evict` in-scope slots of lowest importance (ties: the older slot), in column
  // order: the largest of the negated scores by an order statistic, no sort; the chosen columns
  // first by a stable partition (no nonzero(), whose size the host would read).
  static torch::Tensor lowest_in_scope(const torch::Tensor& importance, const torch::Tensor& scope, int64_t evict) {
    torch::Tensor masked = importance.masked_fill(scope.logical_not(), std::numeric_limits<double>::infinity());
    return first_true_columns(top_k_mask(masked.neg(), evict), evict);  // exactly `evict` per row
  }

  Importance importance_;
  Scope scope_;
  double scope_ratio_;
  int64_t sinks_, evict_block_;
  bool shared_heads_;
  double easykv_prompt_ratio_, easykv_decode_ratio_;
  int64_t easykv_protect_last_, easykv_sinks_;
  bool easykv_keep_attention_;
  HeadReduce reduce_;
  AttentionLedger ledger_;
  uint64_t evictions_ = 0;
};

const PolicyRegistration registration({
    "roco",
    "Importance score x eviction scope; default RoCo as the EasyKV code runs it (scope easykv); scope std: the "
    "paper's rule, the lowest mean attention outside the top-r std slots (r = B/2)",
    "RoCo / EasyKV (roco-easykv.txt §4.1–4.3 unified view, §5.1.4 Table 1, §5.1.5 r = B/2, §5.3 block-wise "
    "eviction and GQA; scope easykv = the EasyKV reference code)",
    {params::Param::choice("importance", "mas", {"random", "recency", "aas", "aqas", "ltas", "mas"},
                           "the importance score (first axis of the unified view)"),
     params::Param::choice("scope", "easykv", {"none", "window", "std", "easykv"},
                           "the eviction scope (second axis): easykv = the EasyKV code (RoCo's official code), std = "
                           "the paper's rule"),
     params::Param::number("scope_ratio", 0.5, "r = ⌊ratio·B⌋"),
     params::Param::integer("sinks", 0, "slots never evicted (scopes none/window/std; easykv uses easykv_sinks)"),
     params::Param::integer("evict_block", 1, "block-wise eviction (§5.3, Table 6): free at least this many slots"),
     params::Param::flag("shared_heads", false, "one choice for every head from the head-mean scores (TOVA)"),
     params::Param::number("easykv_prompt_recent_ratio", 0.1, "easykv scope, encoding a prompt"),
     params::Param::number("easykv_decode_recent_ratio", 0.3, "easykv scope, decoding"),
     params::Param::integer("easykv_protect_last", 10, "easykv scope"),
     params::Param::integer("easykv_sinks", 4, "easykv scope, encoding a prompt"),
     params::Param::flag("easykv_keep_attention", false, "easykv scope: collect statistics before the cache is full"),
     head_reduce_param()},
    [](const nlohmann::json& p) { return std::make_unique<RocoPolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
