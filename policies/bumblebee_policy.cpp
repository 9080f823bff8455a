// BumbleBee: dynamic KV-cache streaming submodular summarization (bumblebee.txt §5, Alg. 1–2,
// App. D–E). Per KV head, the cache = a recent local window (Fig. 1) + a summary of the older
// tokens that maximises g_λ = λ·f_FL + (1−λ)·c (policies/submodular.hpp):
//  - offline (Alg. 1), at one-shot prefill: greedy maximisation over the whole prompt's keys;
//    lazy greedy by default (same set as naive greedy), stochastic greedy with ε = 1e-5 as the
//    paper used on LongBench (App. D) selectable;
//  - online (Alg. 2), for streamed blocks and decoding: every token leaving the window joins the
//    summary, and while the summary is over budget the element of least conditional gain
//    g(k_i | S' \ k_i) is discarded. The ReLU-cosine similarity matrix of the summary is cached
//    per layer and head and gathered with the cache, so a step costs O(τ·d + τ²) (App. E).
// Accumulated attention a_i (Alg. 2 line 5) is per-slot state "acc", the sum over every query
// that attended the slot. The paper does not publish code; the split of the budget between the
// local window and the summary (`local_ratio`) is ours, 0.5 by default as the H2+Local baseline.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "policies/head_reduce.hpp"
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
    if (lambda_ < 0 || lambda_ > 1) throw std::invalid_argument("bumblebee: lambda must be in [0, 1]");
    if (local_ratio_ < 0 || local_ratio_ >= 1) throw std::invalid_argument("bumblebee: local_ratio must be in [0, 1)");
    if (mode_ != "auto" && mode_ != "offline" && mode_ != "online")
      throw std::invalid_argument("bumblebee: mode must be auto, offline or online");
  }

  std::string name() const override { return "bumblebee"; }
  StatsRequest wants() const override {
    StatsRequest r;
    r.column_sums = true;
    return r;
  }

  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    sim_.clear();
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
    torch::Tensor keep = offline ? summarize_offline(layer, cache, window, summary_budget)
                                 : summarize_online(layer, cache, window, summary_budget);
    cache.keep(keep);
    if (!offline) gather_similarity(layer, keep);
    else sim_.erase(layer);  // rebuilt lazily from the kept keys at the next online step
  }

 private:
  // Alg. 1 per head: candidates are the slots outside the window; the ground set is the whole prompt.
  torch::Tensor summarize_offline(int64_t layer, LayerCache& cache, int64_t window, int64_t k) {
    const int64_t n = cache.size(), older = n - window;
    torch::Tensor keys = cache.keys().to(torch::kCPU, torch::kFloat64);
    torch::Tensor acc = cache.state("acc").to(torch::kCPU, torch::kFloat64);
    std::vector<int64_t> candidates(older);
    std::iota(candidates.begin(), candidates.end(), 0);
    std::vector<torch::Tensor> rows;
    for (int64_t h = 0; h < cache.kv_heads(); ++h) {
      sm::Mixture g(sm::relu_cosine_similarity(keys[h]), acc[h], lambda_, phi_);
      std::vector<int64_t> chosen = sm::maximize(g, candidates, k, greedy_, epsilon_, info_.seed * 1315423911u + layer * 64 + h);
      std::sort(chosen.begin(), chosen.end());
      for (int64_t j = older; j < n; ++j) chosen.push_back(j);
      rows.push_back(torch::tensor(chosen, torch::kInt64));
    }
    return torch::stack(rows);
  }

  // Alg. 2 per head: the summary S' = slots outside the window (the old summary plus the tokens
  // that just left the window); discard the least conditional gain one at a time.
  torch::Tensor summarize_online(int64_t layer, LayerCache& cache, int64_t window, int64_t k) {
    const int64_t n = cache.size(), older = n - window;
    torch::Tensor sim = similarity(layer, cache);  // [kvh, n, n]
    torch::Tensor acc = cache.state("acc").to(torch::kCPU, torch::kFloat64);
    std::vector<torch::Tensor> rows;
    for (int64_t h = 0; h < cache.kv_heads(); ++h) {
      torch::Tensor sim_h = sim[h].contiguous(), acc_h = acc[h].contiguous();
      auto s = sim_h.accessor<double, 2>();
      auto a = acc_h.accessor<double, 1>();
      std::vector<int64_t> summary(older);
      std::iota(summary.begin(), summary.end(), 0);
      while (static_cast<int64_t>(summary.size()) > k) {
        const size_t m = summary.size();
        double total = 0;
        for (int64_t i : summary) total += std::max(0.0, a[i]);
        const double c_norm = std::max(phi_(total), 1e-300);
        size_t worst = 0;
        double worst_gain = std::numeric_limits<double>::infinity();
        for (size_t p = 0; p < m; ++p) {
          const int64_t i = summary[p];
          // Ground set = S': f_FL(S') − f_FL(S' \ i) = sim(i,i) − max_{j≠i} sim(i,j), over |S'|.
          double nearest = 0;
          for (int64_t j : summary)
            if (j != i) nearest = std::max(nearest, s[i][j]);
          const double fl_gain = (s[i][i] - nearest) / static_cast<double>(m);
          const double c_gain = (phi_(total) - phi_(total - std::max(0.0, a[i]))) / c_norm;
          const double gain = lambda_ * fl_gain + (1 - lambda_) * c_gain;
          // Ties: discard the older element, keeping the newest information.
          if (gain < worst_gain) worst_gain = gain, worst = p;
        }
        summary.erase(summary.begin() + static_cast<std::ptrdiff_t>(worst));
      }
      for (int64_t j = older; j < n; ++j) summary.push_back(j);
      rows.push_back(torch::tensor(summary, torch::kInt64));
    }
    return torch::stack(rows);
  }

  // The cached similarity matrix, extended with the rows/columns of slots appended since.
  torch::Tensor similarity(int64_t layer, const LayerCache& cache) {
    const int64_t n = cache.size();
    torch::Tensor keys = cache.keys().to(torch::kCPU, torch::kFloat64);
    torch::Tensor unit = keys / keys.norm(2, -1, true).clamp_min(1e-12);
    auto it = sim_.find(layer);
    if (it == sim_.end() || it->second.size(1) > n) {
      it = sim_.insert_or_assign(layer, torch::relu(torch::matmul(unit, unit.transpose(1, 2)))).first;
      return it->second;
    }
    torch::Tensor& cached = it->second;
    const int64_t old = cached.size(1);
    if (old == n) return cached;
    torch::Tensor fresh = torch::relu(torch::matmul(unit, unit.narrow(1, old, n - old).transpose(1, 2)));  // [kvh, n, new]
    torch::Tensor grown = torch::zeros({cache.kv_heads(), n, n}, torch::kFloat64);
    grown.narrow(1, 0, old).narrow(2, 0, old).copy_(cached);
    grown.narrow(2, old, n - old).copy_(fresh);
    grown.narrow(1, old, n - old).copy_(fresh.transpose(1, 2));
    cached = grown;
    return cached;
  }

  void gather_similarity(int64_t layer, const torch::Tensor& keep) {
    auto it = sim_.find(layer);
    if (it == sim_.end()) return;
    const int64_t kvh = keep.size(0), m = keep.size(1);
    torch::Tensor rows = it->second.gather(1, keep.unsqueeze(-1).expand({kvh, m, it->second.size(2)}));
    it->second = rows.gather(2, keep.unsqueeze(1).expand({kvh, m, m})).contiguous();
  }

  double lambda_;
  sm::Concave phi_;
  std::string mode_;
  sm::Greedy greedy_;
  double epsilon_;
  double local_ratio_;
  HeadReduce reduce_;
  std::map<int64_t, torch::Tensor> sim_;  // per layer: [kv_heads, n, n] ReLU-cosine of cached keys
};

const PolicyRegistration registration({
    "bumblebee",
    "Submodular summary (facility location + concave accumulated attention) plus a recent window",
    "BumbleBee (bumblebee.txt §5, Alg. 1 offline greedy, Alg. 2 online streaming; App. D–E)",
    {{"lambda", 0.3},
     {"phi", "log"},
     {"alpha", 0.04},
     {"beta", 1.0},
     {"mode", "auto"},
     {"greedy", "lazy"},
     {"epsilon", 1e-5},
     {"local_ratio", 0.5},
     {"head_reduce", "mean"}},
    [](const nlohmann::json& p) { return std::make_unique<BumbleBeePolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
