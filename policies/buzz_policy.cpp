// BUZZ: beehive-structured sparse KV cache with segmented heavy hitters (buzz.txt §3.3–3.5,
// Alg. 1–2, Remarks 1–2, Theorem 3.1). The cache is [k sinks | old | new | w window]:
//  - tokens leave the window into the "new" region and are buffered there;
//  - when old + new exceed T (the reference's BuzzKVCacheWithAccumulation: `other_size >
//    sample_threshold`; `trigger: reaches` evicts when they reach T, our earlier reading of
//    Alg. 1): the new tokens are cut into segments of the stride s and only each segment's local
//    maximum of accumulated attention is kept (Alg. 2); the old tokens are re-sampled by interval
//    sampling with ŝ = ⌊(s+1)/2⌋; both become "old";
//  - all buffered new tokens are sampled in that one pass, however many a long prompt brought (the
//    reference); `new_tokens: chunked` runs the step over successive chunks of T − |old| new tokens
//    instead (Alg. 1 "goto 7", Remark 2). If one pass leaves more than T old tokens (a forward
//    of more than ≈ s·T new tokens), the old tokens are re-sampled again until they fit: kvbench's
//    budget is a hard cap, where the reference holds the excess until its next steps thin it;
//  - fewer than k + w tokens: nothing to do (Remark 1).
// Positions: keys are rotated by cache slot (`positions: cache_slot`, the reference's patched
// Llama attention rotates the kept keys by arange(n)); `positions: original` keeps them.
// Slot order: this policy relies on the LayerCache keeping, per head, the slot order keep() was
// given (ascending positions): the old tokens are slots [k, k + n_old), the window the last w
// slots, and kCacheSlot rotates by slot order.
// Budget mapping: the budget is the container, k + w + T = budget, so the cache never holds more
// than its budget after a compression. `window`/`threshold` "auto" split the room left by the
// sinks by Theorem 3.1 (T/w = (s²+1)/(s+1) for odd s, s − 1 for even s).
// Ablations: `local_max: false` samples new tokens by interval too (Fig. 8b, "no local max");
// `old_stride` overrides ŝ (Fig. 8a swaps the strides). BUZZ with log n (§3.5, eq. 7–8):
// `logn: true` multiplies the attention logits by log_base(n), n = the keys attended, base 512.
// Accumulated attention (Alg. 2's A) is per-slot state "acc": Σ over every query that attended
// the slot, reduced from query heads to their KV head (`head_reduce`). Each KV head samples its
// own local maxima (one token per segment in every head, so heads stay the same length).
#include <algorithm>
#include <cmath>
#include <limits>

#include "policies/buzz_sampling.hpp"
#include "policies/head_reduce.hpp"
#include "policies/registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies {
namespace {

// null (the default) or "auto" -> -1.
int64_t auto_or_int(const nlohmann::json& value, const char* name) {
  if (value.is_null()) return -1;
  if (value.is_string()) {
    if (value.get<std::string>() == "auto") return -1;
  } else if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    return value.get<int64_t>();
  }
  throw std::invalid_argument(std::string("buzz: ") + name + " must be \"auto\" or a non-negative integer, got " +
                              value.dump());
}

class BuzzPolicy : public Policy {
 public:
  explicit BuzzPolicy(const nlohmann::json& p)
      : sinks_(p["sinks"]),
        window_(auto_or_int(p["window"], "window")),
        threshold_(auto_or_int(p["threshold"], "threshold")),
        stride_(p["stride"]),
        local_max_(p["local_max"]),
        logn_(p["logn"]),
        logn_base_(p["logn_base"]),
        reduce_(parse_head_reduce(p["head_reduce"])) {
    const std::string trigger = p["trigger"], new_tokens = p["new_tokens"], positions = p["positions"];
    if (trigger != "exceeds" && trigger != "reaches")
      throw std::invalid_argument("buzz: trigger must be exceeds or reaches, got '" + trigger + "'");
    if (new_tokens != "one_pass" && new_tokens != "chunked")
      throw std::invalid_argument("buzz: new_tokens must be one_pass or chunked, got '" + new_tokens + "'");
    if (positions == "cache_slot") mode_ = PositionMode::kCacheSlot;
    else if (positions == "original") mode_ = PositionMode::kOriginal;
    else throw std::invalid_argument("buzz: positions must be cache_slot or original, got '" + positions + "'");
    trigger_at_threshold_ = trigger == "reaches";
    one_pass_ = new_tokens == "one_pass";
    const int64_t old_stride = auto_or_int(p["old_stride"], "old_stride");
    old_stride_ = old_stride < 0 ? buzz::old_stride_for(stride_) : old_stride;
    if (sinks_ < 0) throw std::invalid_argument("buzz: sinks must be >= 0");
    if (stride_ < 2) throw std::invalid_argument("buzz: stride must be >= 2 (a stride of 1 keeps everything)");
    if (old_stride_ < 2)
      throw std::invalid_argument("buzz: the old-token stride is " + std::to_string(old_stride_) +
                                  " (stride 2 gives ⌊(s+1)/2⌋ = 1): old tokens would never thin out and no budget "
                                  "could hold them; use stride >= 3 or old_stride >= 2");
    if (logn_base_ <= 1) throw std::invalid_argument("buzz: logn_base must be > 1");
  }

  std::string name() const override { return "buzz"; }
  PositionMode position_mode() const override { return mode_; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.column_sums = true;
    return r;
  }
  double logit_scale(int64_t n_keys) const override {
    return logn_ ? std::log(static_cast<double>(n_keys)) / std::log(logn_base_) : 1.0;
  }

  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    n_old_.assign(std::max<int64_t>(info.n_layers, 1), 0);
    unlimited_ = info.unlimited();
    if (!unlimited_) layout_ = buzz::resolve_layout(info.budget, sinks_, window_, threshold_, stride_);
  }
  const buzz::Layout& layout() const { return layout_; }

  void observe(int64_t, LayerCache& cache, const AttentionStats& stats, Phase) override {
    torch::Tensor acc = cache.state("acc");
    acc += reduce_to_kv_heads(stats.column_sums, cache.kv_heads(), reduce_).to(acc.device());
  }

  void compress(int64_t layer, LayerCache& cache, Phase) override {
    if (unlimited_) return;
    const int64_t n = cache.size(), k = layout_.sinks, w = layout_.window, T = layout_.threshold;
    if (layer >= static_cast<int64_t>(n_old_.size())) n_old_.resize(layer + 1, 0);
    const int64_t middle = n - k - w;  // old + new; Remark 1: nothing to do until sinks and window fill
    const int64_t slack = trigger_at_threshold_ ? 0 : 1;  // evict at old + new = T + slack
    if (middle < T + slack) return;
    if (T < buzz::kMinThreshold) return keep_last(cache, layout_.sinks + layout_.window + layout_.threshold);

    // The old tokens are slots [k, k + n_old), the buffered new ones follow. The plan is the same
    // for every head (it depends on sizes only); each head picks its own local maxima.
    std::vector<buzz::Run> old = buzz::single_slots(k, std::min(n_old_[layer], middle));
    int64_t next_new = k + static_cast<int64_t>(old.size());  // first buffered new token
    const int64_t end_new = n - w;
    auto sample_new = [&](int64_t take) {
      std::vector<buzz::Run> fresh = local_max_ ? buzz::local_max_segments(next_new, take, stride_)
                                                : buzz::interval_sample(buzz::single_slots(next_new, take), stride_);
      next_new += take;
      old = buzz::interval_sample(old, old_stride_);
      old.insert(old.end(), fresh.begin(), fresh.end());
    };
    if (one_pass_) {
      sample_new(end_new - next_new);
      while (static_cast<int64_t>(old.size()) > T) old = buzz::interval_sample(old, old_stride_);
    } else {
      // Alg. 1 lines 7–17: evict whenever old + new reach T (+ slack), consuming that many new tokens.
      while (static_cast<int64_t>(old.size()) + (end_new - next_new) >= T + slack)
        sample_new(T + slack - static_cast<int64_t>(old.size()));  // ≥ 1: |old| < T after every step
    }
    n_old_[layer] = static_cast<int64_t>(old.size());
    std::vector<buzz::Run> keep = buzz::single_slots(0, k);
    keep.insert(keep.end(), old.begin(), old.end());
    const std::vector<buzz::Run> rest = buzz::single_slots(next_new, n - next_new);  // still-buffered new + window
    keep.insert(keep.end(), rest.begin(), rest.end());
    cache.keep(best_in_runs(cache.state("acc"), keep));
  }

 private:
  // Budgets too small for a threshold of 3 (and the sinks) degenerate to a recent window.
  static void keep_last(LayerCache& cache, int64_t budget) {
    const int64_t n = cache.size();
    if (n <= budget) return;
    cache.keep(torch::arange(n - budget, n, torch::TensorOptions().dtype(torch::kInt64).device(cache.keys().device())).unsqueeze(0));
  }

  // The slot each run keeps, per head ([kv_heads, runs] int64, or [1, runs] when every run is one
  // slot): the first maximum of the head's accumulated attention over the run's slots. The plan
  // goes to the device in one non-blocking copy; nothing comes back.
  static torch::Tensor best_in_runs(const torch::Tensor& acc, const std::vector<buzz::Run>& runs) {
    const auto m = static_cast<int64_t>(runs.size());
    int64_t longest = 1;
    for (const buzz::Run& r : runs) longest = std::max(longest, r.length);
    // Row r: the run's slots, padded with its first slot (a repeat never comes before it, so it
    // never is the first maximum).
    torch::Tensor plan = torch::empty({m, longest}, torch::kInt64);
    int64_t* slot = plan.data_ptr<int64_t>();
    for (const buzz::Run& r : runs)
      for (int64_t i = 0; i < longest; ++i) *slot++ = r.begin + (i < r.length ? i : 0);
    const torch::Tensor on_device = host_tensor_on(plan, acc.device());
    const torch::Tensor first = on_device.select(1, 0).unsqueeze(0);
    if (longest == 1) return first;
    const int64_t heads = acc.size(0);
    torch::Tensor scores = acc.index_select(1, on_device.reshape({-1})).reshape({heads, m, longest});
    return first + scores.argmax(-1);  // argmax: the first maximal index
  }

  int64_t sinks_, window_, threshold_, stride_, old_stride_ = 0;
  bool local_max_, logn_;
  bool trigger_at_threshold_ = false, one_pass_ = true;
  PositionMode mode_ = PositionMode::kCacheSlot;
  double logn_base_;
  HeadReduce reduce_;
  bool unlimited_ = false;
  buzz::Layout layout_;
  std::vector<int64_t> n_old_;  // per layer: the old tokens are slots [k, k + n_old)
};

const PolicyRegistration registration({
    "buzz",
    "Sinks + window + beehive sampling: one local heavy hitter per stride segment of new tokens, interval "
    "re-sampling of old ones, evicting only when the buffer exceeds T (logn: BUZZ with log n)",
    "BUZZ (buzz.txt §3.3 Alg. 1–2, Remarks 1–2, Theorem 3.1; §3.5 eq. 7–8 for log n); defaults follow the "
    "official code, JunqiZhao888/buzz-llm BuzzKVCacheWithAccumulation",
    {params::Param::integer("sinks", 4, "k, attention sinks (the reference's start_size)"),
     params::Param::integer("window", nullptr, "w, the recent window; null = auto").or_null(),
     params::Param::integer("threshold", nullptr, "T, capacity of old + new; null = auto (Theorem 3.1)").or_null(),
     params::Param::integer("stride", 5, "s, one local heavy hitter per stride segment (the reference's sample_stride)"),
     params::Param::integer("old_stride", nullptr, "ŝ, re-sampling stride of old tokens; null = auto: ⌊(s+1)/2⌋").or_null(),
     params::Param::flag("local_max", true, "false: new tokens interval-sampled too (the reference's BuzzKVCacheNoMax)"),
     params::Param::flag("logn", false, "BUZZ with log n (eq. 7–8)"),
     params::Param::number("logn_base", 512.0, "the base of eq. 7"),
     head_reduce_param(),
     params::Param::choice("trigger", "exceeds", {"exceeds", "reaches"},
                           "evict when old + new exceed T (the reference) or reach it"),
     params::Param::choice("new_tokens", "one_pass", {"one_pass", "chunked"},
                           "sample every buffered new token at once (the reference) or Alg. 1's chunks of T − |old|"),
     params::Param::choice("positions", "cache_slot", {"cache_slot", "original"},
                           "rotate keys by cache slot (the reference) or keep original positions")},
    [](const nlohmann::json& p) { return std::make_unique<BuzzPolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
