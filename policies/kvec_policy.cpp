// K-VEC: coverage-driven KV-cache eviction (k-vec.txt §4, Alg. 1), applied at prefill layer by
// layer over SnapKV's scoring (observation window, pooling, window kept):
//  1. P[h,t] = mean attention of the last O queries to token t (eq. 8), per query head;
//  2. cross-head coverage: the δ heads with the lowest std of P over tokens (eq. 10; entropy as
//     the Table 10f ablation) are rescored with the wider window O' (eq. 11). σ is taken over all
//     T tokens as eq. 10 writes it (P ∈ R^{H×T}), window included (`std_over: prefix`: over the
//     tokens outside the window only, the earlier reading);
//  3. cross-layer coverage: I[t] = window mean of the max over heads (eq. 13), coverage[t] =
//     n_t/(ℓ+1) with n_t the layers before ℓ that kept t (eq. 12), focus = I·(1 − coverage)
//     (eq. 14), P' = P + λ·focus (eq. 15);
//  4. the top β·B tokens of each head by P are forced kept (eq. 16 sets P' = 1; we rank them above
//     every other score so they are never evicted; `force_literal_one` restores the literal 1.0);
//  5. SnapKV's selection on P': the O window tokens plus the top (B − O) others.
// Scores are computed per query head (A ∈ R^{L×H×T×T} in the paper). GQA (`gqa`; no official
// code): `repeat` (default) as the official SnapKV code K-VEC adapts (§5.1), every query head
// keeps its own tokens and the layer stores n_heads heads; `reduce` reduces P and P' to the KV
// head with `head_reduce`. SnapKV's 1D pooling (max, kernel 7) is applied to P (after step 2)
// and to the focus term, our reading of "all other details adapted from SnapKV" (§5.1).
#include <algorithm>
#include <cmath>

#include "policies/gqa_mode.hpp"
#include "policies/head_reduce.hpp"
#include "policies/registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies {
namespace {

class KvecPolicy : public Policy {
 public:
  explicit KvecPolicy(const nlohmann::json& p)
      : window_(p["window"]),
        wide_window_(p["wide_window"]),
        delta_(p["delta"]),
        lambda_(p["lambda"]),
        beta_(p["beta"]),
        head_coverage_(p["head_coverage"]),
        layer_coverage_(p["layer_coverage"]),
        criterion_(p["head_criterion"]),
        pooling_(p["pooling"]),
        kernel_(p["kernel"]),
        literal_one_(p["force_literal_one"]),
        reduce_(parse_head_reduce(p["head_reduce"])),
        gqa_(parse_gqa_mode(p["gqa"])),
        std_over_all_(parse_std_over(p["std_over"])) {
    // Ranges and choices are the declaration's; these relate two parameters or need parity.
    if (wide_window_ < window_) throw std::invalid_argument("kvec: need window <= wide_window");
    if (kernel_ % 2 == 0) throw std::invalid_argument("kvec: kernel must be odd");
  }

  std::string name() const override { return "kvec"; }
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.window = std::max(window_, wide_window_);
    return r;
  }

  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    layer_counts_ = torch::Tensor();
    rows_ = torch::Tensor();
  }

  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override {
    // The coverage counters n_t belong to one forward pass (Alg. 1 runs layer by layer over one
    // prompt): a new forward starts at layer 0 with nothing covered, so that decode-time or
    // streamed compressions do not pile counts up past the number of layers (coverage > 1).
    // They are indexed by original position, up to the largest one the forward holds (said by
    // the runtime; read from the positions only when a caller does not say).
    const int64_t positions = stats.position_end > 0 ? stats.position_end
                                                      : (cache.size() > 0 ? cache.positions().max().item<int64_t>() + 1 : 1);
    if (layer == 0 || !layer_counts_.defined()) {
      layer_counts_ = torch::zeros({positions}, torch::TensorOptions().dtype(torch::kFloat64).device(cache.keys().device()));
    } else if (positions > layer_counts_.size(0)) {
      layer_counts_ = torch::cat({layer_counts_, torch::zeros({positions - layer_counts_.size(0)}, layer_counts_.options())});
    }
    // On the cache's device, as they come (half types widened exactly to float32): the means are float64.
    rows_ = stats.window_rows;
    if (rows_.defined() && rows_.scalar_type() != torch::kFloat64) rows_ = rows_.to(torch::kFloat32);
  }

  // Every score below is indexed by each head's tokens in arrival order (j = its j-th oldest
  // token), so pooling and "the window" read neighbours in time; under SlotOrder::kAny `perm`
  // maps those indices to slots, and only the evicted slots move.
  void compress(int64_t layer, LayerCache& cache, Phase) override {
    const int64_t n = cache.size(), budget = info_.budget;
    if (n <= budget || !rows_.defined()) return;
    const int64_t w = std::min<int64_t>({rows_.size(1), window_, n}), prefix = n - w;
    const int64_t keep_others = std::max<int64_t>(0, budget - w);
    // Repeated at the first eviction, while the slots are still in arrival order, whichever
    // branch it takes (a later decode-time eviction could not repeat a moved cache).
    if (gqa_ == GqaMode::kRepeat) repeat_to_query_heads(cache, info_);
    if (keep_others == 0 || prefix <= 0) {  // the newest `budget` tokens
      const int64_t kept = std::min(budget, n);
      cache.keep(cache.arrival_order().narrow(1, n - kept, kept));
      return;
    }
    const int64_t kvh = cache.kv_heads(), heads = rows_.size(0);
    torch::Tensor perm;  // [kvh, n] arrival index → slot; undefined while slots are in arrival order
    if (!cache.in_arrival_order()) perm = cache.arrival_order().expand({kvh, n});
    // Query head q reads the slots of stored head q / (heads / kvh).
    const int64_t group = std::max<int64_t>(heads / kvh, 1);
    torch::Tensor query_perm = perm.defined() && group > 1 ? repeat_rows(perm, group) : perm;
    torch::Tensor P_all = in_arrival(window_mean(window_), query_perm);  // [H, n]
    torch::Tensor P = P_all.narrow(-1, 0, prefix);                       // [H, prefix]
    if (head_coverage_ && delta_ > 0) {
      const torch::Tensor& over = std_over_all_ ? P_all : P;
      torch::Tensor focus = criterion_ == "std" ? std_dev(over) : entropy(over);
      // Lowest std = least focused; highest entropy = least focused. Their rows are rescored
      // with the wide window, chosen and written on the device.
      torch::Tensor order = std::get<1>(focus.sort(/*stable=*/true, 0, /*descending=*/criterion_ == "entropy"));
      const torch::Tensor heads_rescored = order.narrow(0, 0, std::min<int64_t>(delta_, P.size(0)));
      torch::Tensor head_perm = query_perm.defined() ? query_perm.index_select(0, heads_rescored) : query_perm;
      torch::Tensor wide = in_arrival(window_mean(wide_window_, heads_rescored), head_perm).narrow(-1, 0, prefix);
      P.index_copy_(0, heads_rescored, wide.to(P.scalar_type()));
    }
    P = pool(P);
    torch::Tensor Pkv = reduce_to_kv_heads(P, kvh, reduce_);  // [kvh, prefix]
    torch::Tensor adjusted = Pkv.clone();
    torch::Tensor positions = in_arrival(cache.positions(), perm).narrow(1, 0, prefix);
    if (layer_coverage_) {
      // eq. 13: window mean over the last O queries of the max over heads.
      torch::Tensor rows = rows_.narrow(1, rows_.size(1) - w, w);  // [H, w, n]
      if (query_perm.defined()) rows = rows.gather(2, query_perm.unsqueeze(1).expand(rows.sizes()));
      torch::Tensor importance = std::get<0>(rows.narrow(-1, 0, prefix).max(0)).to(torch::kFloat64).mean(0);  // [prefix]
      torch::Tensor counts = layer_counts_.index_select(0, positions.reshape({-1})).reshape(positions.sizes());
      torch::Tensor coverage = counts / static_cast<double>(layer + 1);  // [kvh, prefix]
      torch::Tensor focus = pool(importance.unsqueeze(0) * (1 - coverage));
      adjusted = adjusted + lambda_ * focus;
    }
    const int64_t forced = std::min<int64_t>(keep_others, static_cast<int64_t>(std::floor(beta_ * budget)));
    if (forced > 0) {
      // eq. 16 writes 1.0, which protects them only while every P' ≤ 1; the text's intent ("ensure
      // they are not evicted") is kept by default by ranking them above every other score.
      const torch::Tensor forced_score = literal_one_ ? torch::ones({}, adjusted.options()) : adjusted.amax() + 1.0;
      adjusted = torch::where(top_k_mask(Pkv, forced), forced_score, adjusted);
    }
    torch::Tensor chosen = top_k_mask(adjusted, keep_others);  // ties: the older token
    record_coverage(positions, chosen);
    // The prefix tokens not chosen (the same number on every head) leave; the window stays.
    torch::Tensor evicted = first_true_columns(chosen.logical_not(), prefix - keep_others);
    cache.evict(perm.defined() ? perm.gather(1, evicted) : evicted);
  }

 private:
  // Mean of the last `o` window rows, [H, n] float64 (`heads` defined: those heads' rows only).
  torch::Tensor window_mean(int64_t o, const torch::Tensor& heads = {}) const {
    const int64_t rows = std::min<int64_t>(o, rows_.size(1));
    torch::Tensor r = rows_.narrow(1, rows_.size(1) - rows, rows);
    if (heads.defined()) r = r.index_select(0, heads);
    return r.to(torch::kFloat64).mean(1);
  }

  // Per-slot values [rows, n] taken into arrival order (as they are while slots are in arrival order).
  static torch::Tensor in_arrival(const torch::Tensor& by_slot, const torch::Tensor& perm) {
    return perm.defined() ? by_slot.gather(1, perm) : by_slot;
  }

  static bool parse_std_over(const std::string& v) {
    if (v == "all") return true;
    if (v == "prefix") return false;
    throw std::logic_error("kvec: std_over '" + v + "' is not a declared choice");
  }

  // Sample standard deviation of every row (divisor n − 1, as torch's std; σ = 0 for one token),
  // by two passes: torch's Welford reduction costs ~8× more on rows of a few thousand.
  static torch::Tensor std_dev(const torch::Tensor& P) {
    const int64_t n = P.size(1);
    torch::Tensor centred = P - P.mean(1, /*keepdim=*/true);
    return (centred.square().sum(1) / static_cast<double>(std::max<int64_t>(n - 1, 1))).sqrt();
  }

  static torch::Tensor entropy(const torch::Tensor& P) {
    torch::Tensor p = P / P.sum(1, true).clamp_min(1e-30);
    return -(p * (p.clamp_min(1e-30)).log()).sum(1);
  }

  torch::Tensor pool(const torch::Tensor& x) const {
    if (pooling_ == "none" || kernel_ == 1) return x;
    torch::Tensor in = x.dim() == 1 ? x.reshape({1, 1, -1}) : x.unsqueeze(1);
    torch::Tensor out = pooling_ == "max" ? torch::max_pool1d(in, kernel_, 1, kernel_ / 2)
                                          : torch::avg_pool1d(in, kernel_, 1, kernel_ / 2);
    return x.dim() == 1 ? out.reshape({-1}) : out.squeeze(1);
  }

  // n_t += 1 for every original position kept by at least one head of this layer.
  // positions [rows, m], chosen [rows, m] bool: the heads that kept each position are counted,
  // and any count turns into one.
  void record_coverage(const torch::Tensor& positions, const torch::Tensor& chosen) {
    torch::Tensor heads_keeping = torch::zeros_like(layer_counts_);
    heads_keeping.index_add_(0, positions.reshape({-1}), chosen.reshape({-1}).to(torch::kFloat64));
    layer_counts_ += heads_keeping.clamp_max_(1.0);
  }

  int64_t window_, wide_window_, delta_;
  double lambda_, beta_;
  bool head_coverage_, layer_coverage_;
  std::string criterion_, pooling_;
  int64_t kernel_;
  bool literal_one_;
  HeadReduce reduce_;
  GqaMode gqa_;
  bool std_over_all_;  // eq. 10's σ over all T tokens (true) or the tokens outside the window
  torch::Tensor layer_counts_;  // n_t per original position, on the cache's device
  torch::Tensor rows_;          // this layer's window rows [H, w, n], in slot order
};

const PolicyRegistration registration({
    "kvec",
    "SnapKV scoring with cross-head (wider window on unfocused heads) and cross-layer coverage",
    "K-VEC (k-vec.txt §4, Alg. 1; §5.1 defaults δ = 3, O' = 32, λ = 1.0, β = 25 % (Table 10d))",
    {params::Param::integer("window", 16, "O, observation window (eq. 8)", 1),
     params::Param::integer("wide_window", 32, "O', the wider window of the rescored heads (eq. 11, Table 10b)", 1),
     params::Param::integer("delta", 3, "δ, heads of lowest focus rescored (Table 10e)", 0),
     params::Param::number("lambda", 1.0, "λ, weight of the coverage term (eq. 15, Table 10c)", 0),
     params::Param::number("beta", 0.25, "β, share of the budget forced kept by P (eq. 16, Table 10d)", 0, 1),
     params::Param::flag("head_coverage", true, "the cross-head module (Table 10a)"),
     params::Param::flag("layer_coverage", true, "the cross-layer module (Table 10a)"),
     params::Param::choice("head_criterion", "std", {"std", "entropy"}, "how unfocused heads are found (Table 10f)"),
     params::Param::choice("pooling", "max", {"max", "avg", "none"}, "SnapKV's pooling of P and the focus term"),
     params::Param::integer("kernel", 7, "pooling kernel (odd)", 1),
     params::Param::flag("force_literal_one", false, "eq. 16's literal 1.0 for the forced tokens"),
     params::Param::choice("std_over", "all", {"all", "prefix"}, "σ of eq. 10 over all tokens or outside the window"),
     gqa_param(),
     head_reduce_param()},
    [](const nlohmann::json& p) { return std::make_unique<KvecPolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
