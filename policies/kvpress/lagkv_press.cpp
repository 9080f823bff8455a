// LagKVPress (Liang et al., "LagKV: Lag-Relative Information of the KV Cache Tells Which Tokens
// Are Important", 2025; kvpress/presses/lagkv_press.py). After `n_sink` sinks the tokens fall in
// chunks of `lag_size`; each chunk but the last is scored against the next one (its lag
// reference): per channel, the token's key (value) is min-max normalised by the next chunk's range,
// the standard deviation over channels is soft-maxed over the chunk, key and value scores are
// averaged and — unless `cross_scoring` — replaced by their rank within the chunk / lag_size. The
// sinks and the last chunk plus the remainder score 1 (kept). A prompt shorter than
// n_sink + 2·lag_size is scored so that the newest tokens win ((j − n_sink)/(n − n_sink)).
#include "policies/kvpress/press.hpp"

namespace kvbench::policies::kvpress {
namespace {

class LagKvPress : public Press {
 public:
  explicit LagKvPress(const nlohmann::json& p)
      : sinks_(p.at("n_sink")), lag_(p.at("lag_size")), cross_scoring_(p.at("cross_scoring")) {}
  std::string name() const override { return "kvpress:lagkv"; }
  torch::Tensor scores(int64_t, LayerCache& cache, const torch::Tensor&) override {
    const ArrivalOrder order(cache);
    return order.scatter(score_in_order(order.gather(cache.keys().to(torch::kFloat32)),
                                        order.gather(cache.values().to(torch::kFloat32))));
  }

 private:
  // keys, values [kv_heads, n, d] in arrival order -> [kv_heads, n].
  torch::Tensor score_in_order(const torch::Tensor& keys, const torch::Tensor& values) const {
    const int64_t heads = keys.size(0), n = keys.size(1), d = keys.size(2);
    torch::Tensor score = torch::ones({heads, n}, keys.options());
    if (n < sinks_ + 2 * lag_) {
      if (n > sinks_)
        score.narrow(1, sinks_, n - sinks_).copy_(torch::arange(n - sinks_, keys.options()) / static_cast<double>(n - sinks_));
      return score;
    }
    const int64_t chunks = (n - sinks_) / lag_, end = sinks_ + chunks * lag_;
    auto chunked = [&](const torch::Tensor& x) { return x.narrow(1, sinks_, end - sinks_).reshape({heads, chunks, lag_, d}); };
    torch::Tensor lagged = (states_score(chunked(keys)) + states_score(chunked(values))) / 2;  // [heads, chunks−1, lag]
    if (!cross_scoring_) lagged = lagged.argsort(/*dim=*/-1, /*descending=*/false).argsort(/*dim=*/-1, /*descending=*/false).to(keys.dtype()) / static_cast<double>(lag_);
    score.narrow(1, sinks_, (chunks - 1) * lag_).copy_(lagged.reshape({heads, (chunks - 1) * lag_}));
    return score;
  }
  // target [heads, chunks, lag, d] -> [heads, chunks − 1, lag]: each chunk against the next one.
  static torch::Tensor states_score(const torch::Tensor& target) {
    const int64_t chunks = target.size(1);
    torch::Tensor reference = target.narrow(1, 1, chunks - 1), current = target.narrow(1, 0, chunks - 1);
    torch::Tensor low = std::get<0>(reference.min(-2, /*keepdim=*/true));
    torch::Tensor high = std::get<0>(reference.max(-2, /*keepdim=*/true));
    return ((current - low) / (high - low)).std(-1, /*unbiased=*/true).softmax(-1);
  }

  int64_t sinks_, lag_;
  bool cross_scoring_;
};

const PressRegistration lagkv_registration(
    {"lagkv", "Lag-relative spread of keys and values, ranked within chunks of lag_size; sinks and the last chunk kept",
     "Liang et al. 2025 (arXiv 2504.04704); kvpress lagkv_press.py",
     {params::Param::integer("n_sink", 4, "attention sinks: the first tokens, always kept", 0),
      params::Param::integer("lag_size", 128, "chunk length; each chunk is scored against the next", 2),
      params::Param::flag("cross_scoring", false, "keep the raw scores (comparable across chunks) instead of ranks")},
     [](const nlohmann::json& p) { return std::make_unique<LagKvPress>(p); },
     /*bare_name=*/true});

}  // namespace
}  // namespace kvbench::policies::kvpress
