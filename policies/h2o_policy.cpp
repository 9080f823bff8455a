// H2O: Heavy-Hitter Oracle (Zhang et al., NeurIPS 2023, Alg. 1; reference code FMInference/H2O,
// h2o_hf/utils_real_drop/modify_llama.py, H2OKVCache_LayerWise). Every slot accumulates the
// attention it receives (column sums over each forward's queries, reduced from query heads to
// KV heads with `head_reduce`, mean by default: the same ranking as the GQA port's group sum);
// a layer over budget keeps its most recent tokens plus the heavy hitters — the highest
// accumulated scores among the older tokens — per KV head. Budget split: H2O's default half/half
// (recent = ⌊recent_ratio·B⌋, heavy hitters = the rest).
// `variant`:
//  - "real_drop" (default): the reference's real-drop cache: scores accumulate over every forward
//    and eviction runs whenever the protocol compresses: with --protocol stream/decode every step
//    evicts using the accumulated scores (Alg. 1's greedy eviction); with oneshot it is H2O applied
//    once to the prompt.
//  - "oneshot": H2O as the one-shot prompt compressor of KVCache-Factory (H2OKVCluster, the H2O
//    baseline of SnapKV/PyramidKV/Ada-KV tables): column sums of the prompt's queries, a fixed
//    recent window of `window` tokens (8, as KVCache-Factory's LongBench runner sets for H2O) and
//    B − window heavy hitters, compressing the prompt
//    once; it refuses to evict during streaming or decoding (use real_drop for that).
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"

namespace kvbench::policies {
namespace {

class H2OPolicy : public ScoredPolicy {
 public:
  explicit H2OPolicy(const nlohmann::json& p)
      : ScoredPolicy("h2o", make_scorer("h2o", p)), oneshot_(parse_variant(p["variant"].get<std::string>())), window_(p["window"]) {
    if (window_ < 0) throw std::invalid_argument("h2o: window must be >= 0");
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (oneshot_ && phase != Phase::kPrefill) {
      if (fits_budget(cache, std::max<int64_t>(1, info_.budget))) return;
      throw std::invalid_argument(std::string("h2o: variant 'oneshot' compresses the prompt once; it cannot evict in phase ") +
                                  to_string(phase) + " (use --protocol oneshot, or variant real_drop)");
    }
    ScoredPolicy::compress(layer, cache, phase);
  }

 protected:
  int64_t recent_slots(int64_t budget) const override {
    return oneshot_ ? std::min(window_, budget) : ScoredPolicy::recent_slots(budget);
  }

 private:
  static bool parse_variant(const std::string& v) {
    if (v == "real_drop") return false;
    if (v == "oneshot") return true;
    throw std::invalid_argument("h2o: variant must be real_drop or oneshot, got '" + v + "'");
  }
  bool oneshot_;
  int64_t window_;
};

const PolicyRegistration registration({
    "h2o",
    "Heavy hitters (accumulated attention) + recent window, per KV head",
    "H2O (Zhang et al., NeurIPS 2023, Alg. 1; FMInference/H2O utils_real_drop; oneshot: KVCache-Factory H2OKVCluster)",
    {{"variant", "real_drop"}, {"recent_ratio", 0.5}, {"window", 8}, {"head_reduce", "mean"}},
    [](const nlohmann::json& p) { return std::make_unique<H2OPolicy>(p); }});

}  // namespace
}  // namespace kvbench::policies
