// CURPress (Sengupta et al., "Value-Guided KV Compression for LLMs via Approximated CUR
// Decomposition" (CurDKV), 2025; kvpress/presses/cur_press.py): approximate leverage scores. Per
// token, k2 = ‖key‖² and v2 = ‖value‖²; with `use_local_approximation` each is normalised within
// consecutive windows of `local_window_size` tokens (arrival order); the score is k2·v2
// (`leverage_type`: key, value, kv_avg, kv_product), normalised over the head, and the first
// `num_sinks` tokens score 1 (kept). `use_random_leverage` first projects keys and values on a
// Gaussian d×20 matrix G/√20 — drawn in kvpress from the global RNG, here from a generator seeded
// with the job's seed.
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "policies/kvpress/press.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

class CurPress : public Press {
 public:
  explicit CurPress(const nlohmann::json& p)
      : sinks_(p.at("num_sinks")),
        leverage_(p.at("leverage_type")),
        random_leverage_(p.at("use_random_leverage")),
        local_(p.at("use_local_approximation")),
        window_(p.at("local_window_size")) {}
  std::string name() const override { return "kvpress:cur"; }
  void begin(const SequenceInfo& info) override { seed_ = info.seed; }
  torch::Tensor scores(int64_t, LayerCache& cache, const torch::Tensor&) override {
    const ArrivalOrder order(cache);
    torch::Tensor keys = order.gather(cache.keys().to(torch::kFloat32));
    torch::Tensor values = order.gather(cache.values().to(torch::kFloat32));
    if (random_leverage_) {
      constexpr int64_t kRank = 20;
      at::Generator generator = at::detail::createCPUGenerator(seed_);
      torch::Tensor g = torch::randn({keys.size(-1), kRank}, generator, torch::kFloat32) / std::sqrt(double(kRank));
      g = host_tensor_on(g, keys.device());
      keys = keys.matmul(g);
      values = values.matmul(g);
    }
    torch::Tensor k2 = keys.square().sum(-1), v2 = values.square().sum(-1);  // [kv_heads, n]
    if (local_) {
      k2 = normalised_in_windows(k2);
      v2 = normalised_in_windows(v2);
    }
    torch::Tensor s = leverage_ == "key" ? k2 : leverage_ == "value" ? v2 : leverage_ == "kv_avg" ? (k2 + v2) / 2 : k2 * v2;
    s = s / s.sum(-1, /*keepdim=*/true);
    s.narrow(1, 0, std::min<int64_t>(sinks_, s.size(1))).fill_(1.0);
    return order.scatter(s);
  }

 private:
  // x [heads, n] -> each window of `window_` consecutive tokens divided by its sum (the last,
  // shorter window by the sum of what it holds).
  torch::Tensor normalised_in_windows(const torch::Tensor& x) const {
    const int64_t heads = x.size(0), n = x.size(1), padded = (n + window_ - 1) / window_ * window_;
    torch::Tensor w = torch::constant_pad_nd(x, {0, padded - n}).reshape({heads, padded / window_, window_});
    return (w / w.sum(-1, /*keepdim=*/true)).reshape({heads, padded}).narrow(1, 0, n);
  }

  int64_t sinks_;
  std::string leverage_;
  bool random_leverage_, local_;
  int64_t window_;
  uint64_t seed_ = 0;
};

const PressRegistration cur_registration(
    {"cur", "Approximate CUR leverage scores of keys and values, normalised in local windows; sinks kept",
     "Sengupta et al. 2025, CurDKV (arXiv 2509.15038); kvpress cur_press.py",
     {params::Param::integer("num_sinks", 4, "the first tokens, always kept", 0),
      params::Param::choice("leverage_type", "kv_product", {"key", "value", "kv_avg", "kv_product"}, "which leverage scores"),
      params::Param::flag("use_random_leverage", false, "project keys and values on a seeded Gaussian d×20 matrix first"),
      params::Param::flag("use_local_approximation", true, "normalise the leverage within local windows"),
      params::Param::integer("local_window_size", 16, "the local windows' length", 1)},
     [](const nlohmann::json& p) { return std::make_unique<CurPress>(p); },
     /*bare_name=*/true});

}  // namespace
}  // namespace kvbench::policies::kvpress
