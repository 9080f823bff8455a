// BumbleBee: dynamic KV-cache streaming submodular summarization (bumblebee.txt §5, Alg. 1–2,
// App. D–E). Per KV head, the cache = a recent local window (Fig. 1) + a summary of the older
// tokens that maximises g_λ = λ·f_FL + (1−λ)·c (policies/submodular.hpp):
//  - offline (Alg. 1), at one-shot prefill: greedy maximisation over the whole prompt's keys;
//    lazy greedy by default (same set as naive greedy), stochastic greedy with ε = 1e-5 as the
//    paper used on LongBench (App. D) selectable;
//  - online (Alg. 2), for streamed blocks and decoding: every token leaving the window joins the
//    summary, and while the summary is over budget the element of least conditional gain
//    g(k_i | S' \ k_i) is discarded. The members' ReLU-cosine similarities are kept (computed once,
//    when a token joins) and every member's nearest other member is remembered
//    (policies/online_summary.hpp), so a step costs O(k·d) (App. E states O(τ·d + τ²) for
//    recomputing the gains).
// Accumulated attention a_i (Alg. 2 line 5) is per-slot state "acc", the sum over every query
// that attended the slot. The paper does not publish code; the split of the budget between the
// local window and the summary (`local_ratio`) is ours, 0.5 by default as the H2+Local baseline.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "policies/head_reduce.hpp"
#include "policies/online_summary.hpp"
#include "policies/online_summary_ops.hpp"
#include "policies/registry.hpp"
#include "policies/selection.hpp"
#include "policies/submodular.hpp"

namespace kvbench::policies {
namespace {

namespace sm = submodular;

class BumbleBeePolicy : public Policy {
 public:
  explicit BumbleBeePolicy(const nlohmann::json& p)
      : lambda_(p["lambda"]),
        phi_(sm::Concave::parse(p["phi"], p["alpha"], p["beta"])),
        mode_(p["mode"]),
        greedy_(sm::parse_greedy(p["greedy"])),
        epsilon_(p["epsilon"]),
        local_ratio_(p["local_ratio"]),
        reduce_(parse_head_reduce(p["head_reduce"])) {
    if (local_ratio_ < 0 || local_ratio_ >= 1) throw std::invalid_argument("bumblebee: local_ratio must be in [0, 1)");
    // Checked whichever phi is chosen (only `power` reads them): a value given is a value checked.
    const double alpha = p["alpha"], beta = p["beta"];
    if (!(alpha > 0 && beta > 0 && std::isfinite(alpha) && std::isfinite(beta)))
      throw std::invalid_argument("bumblebee: alpha and beta must be finite and > 0, got alpha " + p["alpha"].dump() +
                                  ", beta " + p["beta"].dump());
    // The stochastic greedy samples n/k·log(1/ε) candidates: ε outside (0, 1) makes that count meaningless.
    if (!(epsilon_ > 0 && epsilon_ < 1)) throw std::invalid_argument("bumblebee: epsilon must be in (0, 1)");
  }

  std::string name() const override { return "bumblebee"; }
  // The window and the tie rules read arrival order; the summary's state travels with the slots.
  bool slot_order_free() const override { return true; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.column_sums = true;
    return r;
  }

  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    online_.clear();
    online_ops_.clear();
  }

  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase) override {
    torch::Tensor acc = cache.state("acc");
    acc += reduce_to_kv_heads(stats.column_sums, cache.kv_heads(), reduce_).to(acc.device());
  }

  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    const int64_t n = cache.size();
    const int64_t budget = info_.budget;
    if (n <= budget) return;
    const int64_t window = std::min<int64_t>(budget - 1, static_cast<int64_t>(std::floor(local_ratio_ * budget)));
    const int64_t summary_budget = budget - window;
    const bool offline = mode_ == "offline" || (mode_ == "auto" && phase == Phase::kPrefill);
    if (offline) {
      cache.keep(summarize_offline(layer, cache, window, summary_budget));
      online_.erase(layer);  // rebuilt from the kept keys at the next online step
      online_ops_.erase(layer);
      return;
    }
    // The CPU keeps its incremental summary; elsewhere the tensor-op one never reads the device.
    if (cache.keys().device().is_cpu()) {
      OnlineSummary& summary = online_.try_emplace(layer, lambda_, phi_).first->second;
      cache.evict(summary.discard(cache, cache.state("acc"), window, summary_budget));
    } else {
      OnlineSummaryOps& summary = online_ops_.try_emplace(layer, lambda_, phi_).first->second;
      cache.evict(summary.discard(cache, cache.state("acc"), window, summary_budget));
    }
  }

 private:
  // Alg. 1 per head: candidates are the tokens outside the window; the ground set is the whole
  // prompt. Computed over the tokens in arrival order (greedy's ties go to the older token), the
  // chosen ones mapped back to their slots.
  torch::Tensor summarize_offline(int64_t layer, LayerCache& cache, int64_t window, int64_t k) {
    const int64_t n = cache.size(), older = n - window, kvh = cache.kv_heads();
    torch::Tensor keys = cache.keys().to(torch::kCPU, torch::kFloat64);
    torch::Tensor acc = cache.state("acc").to(torch::kCPU, torch::kFloat64);
    torch::Tensor perm;  // arrival index → slot, while slots have moved
    if (!cache.in_arrival_order()) {
      perm = cache.arrival_order().to(torch::kCPU).expand({kvh, n}).contiguous();
      keys = keys.gather(1, perm.unsqueeze(-1).expand(keys.sizes()));
      acc = acc.gather(1, perm);
    }
    std::vector<int64_t> candidates(older);
    std::iota(candidates.begin(), candidates.end(), 0);
    std::vector<torch::Tensor> rows;
    for (int64_t h = 0; h < kvh; ++h) {
      sm::Mixture g(sm::relu_cosine_similarity(keys[h]), acc[h], lambda_, phi_);
      std::vector<int64_t> chosen = sm::maximize(g, candidates, k, greedy_, epsilon_, info_.seed * 1315423911u + layer * 64 + h);
      std::sort(chosen.begin(), chosen.end());
      for (int64_t j = older; j < n; ++j) chosen.push_back(j);
      rows.push_back(torch::tensor(chosen, torch::kInt64));
    }
    torch::Tensor kept = torch::stack(rows);
    return perm.defined() ? perm.gather(1, kept) : kept;
  }

  double lambda_;
  sm::Concave phi_;
  std::string mode_;
  sm::Greedy greedy_;
  double epsilon_;
  double local_ratio_;
  HeadReduce reduce_;
  std::map<int64_t, OnlineSummary> online_;         // per layer: Alg. 2's summary, kept across steps
  std::map<int64_t, OnlineSummaryOps> online_ops_;  // the same off the CPU
};

const PolicyRegistration registration({
    "bumblebee",
    "Submodular summary (facility location + concave accumulated attention) plus a recent window",
    "BumbleBee (bumblebee.txt §5, Alg. 1 offline greedy, Alg. 2 online streaming; App. D–E)",
    {params::Param::number("lambda", 0.3, "λ: weight of facility location vs the concave attention term (§5)", 0, 1),
     params::Param::choice("phi", "log", {"log", "power"}, "ϕ: log(1+x) (♥) or the power-based inverse (♦)"),
     params::Param::number("alpha", 0.04, "α of the power ϕ (read with phi: power)"),
     params::Param::number("beta", 1.0, "β of the power ϕ (read with phi: power)"),
     params::Param::choice("mode", "auto", {"auto", "offline", "online"},
                           "auto: Alg. 1 at one-shot prefill, Alg. 2 while streaming and decoding"),
     params::Param::choice("greedy", "lazy", {"naive", "lazy", "stochastic"}, "Alg. 1's greedy (lazy returns naive's set)"),
     params::Param::number("epsilon", 1e-5, "ε of the stochastic greedy (App. D)"),
     params::Param::number("local_ratio", 0.5, "share of the budget kept as the recent window"),
     head_reduce_param()},
    [](const nlohmann::json& p) { return std::make_unique<BumbleBeePolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
