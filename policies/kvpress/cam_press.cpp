// CAMPress (kvpress/presses/cam_press.py, after Zhang et al., "CaM: Cache Merging for
// Memory-efficient LLMs Inference", ICML 2024): compression while generating, as DecodingPress,
// but an evicted token's value may first be merged into the kept tokens after it. Per layer, from
// the first decode step, Ā[h, t] sums the current query's attention to t (the mean over KV head h's
// query group, in the model's dtype as kvpress sums it). Once compression_interval steps have
// passed and the layer holds more than the budget (kvpress's target_size):
// - the press's scores, averaged over the KV heads, keep the same `budget` tokens on every head;
// - of the evicted, the k best-scored (k = steps since the last compression, ties to the later
//   token) are merge candidates; candidate m's window W(m) is the merge_budget kept tokens after it
//   (fewer at the end);
// - on head h, with probability clamp(Ā[h,m] / mean Ā[h,W(m)], 0, 1) (NaN 0, ∞ 1), v_m / |W(m)| is
//   added to every value of W(m).
// The draws come from a CPU generator seeded with the job's seed, one Bernoulli per (head,
// candidate) in kvpress's order, so a float32 run draws what torch.manual_seed(seed) gives kvpress
// (on CUDA kvpress draws from the device's generator instead).
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/policy_refusal.hpp"
#include "policies/registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

constexpr const char* kCamAttentionSum = "cam_attention_sum";  // Ā, per slot: [kv_heads, size]

class CamPress : public WrapperPolicy {
 public:
  CamPress(std::string name, std::unique_ptr<SlotScorer> scorer, const nlohmann::json& p)
      : WrapperPolicy(std::move(name), std::move(scorer)), interval_(p.at("compression_interval")), merge_budget_(p.at("merge_budget")) {
    if (press().repeats_kv())
      throw std::invalid_argument(this->name() + ": CAMPress keeps the same tokens on every KV head; its press must score KV heads");
  }
  StatsRequest wants() const override {
    StatsRequest r = press().wants();
    r.last_row = true;  // the current query's attention, summed into Ā
    return r;
  }
  void begin(const SequenceInfo& info) override {
    WrapperPolicy::begin(info);
    steps_.clear();
    generator_ = at::detail::createCPUGenerator(info.seed);
  }
  // As DecodingPress: the prompt is never cut, and a layer grows for up to an interval past it.
  int64_t layer_budget(int64_t) const override {
    if (info_.unlimited()) return info_.budget;
    return std::max(info_.prompt_len, info_.budget) + interval_ - 1;
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    WrapperPolicy::observe(layer, cache, stats, phase);
    if (info_.unlimited()) return;
    torch::Tensor sum = cache.state(kCamAttentionSum, {}, cache.values().scalar_type());
    if (phase != Phase::kDecode) {  // a new sequence: kvpress starts Ā and the step count afresh at the prefill
      sum.zero_();
      steps_[layer] = 0;
      return;
    }
    sum.add_(mean_over_groups(stats.last_row.to(sum.scalar_type()), cache.kv_heads()).to(sum.device()));
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (phase != Phase::kDecode || info_.unlimited()) return;
    const int64_t steps = ++steps_[layer], budget = info_.budget;
    // kvpress's trigger: the interval is up and the layer is over the target, or (a target of 1)
    // the forward's one token reaches it. The count runs on until then.
    if (!((steps >= interval_ && cache.size() > budget) || budget <= 1)) return;
    steps_[layer] = 0;
    if (cache.size() > budget) merge_and_prune(layer, cache, budget, steps);
  }

 private:
  void merge_and_prune(int64_t layer, LayerCache& cache, int64_t budget, int64_t candidates) {
    const int64_t kv = cache.kv_heads(), n = cache.size(), d = cache.head_dim(), B = merge_budget_;
    const auto device = cache.keys().device();
    // One score per token: the press's (its protected tokens first), averaged over the KV heads.
    const torch::Tensor window = newest_valid(cache, std::min(budget, press().recent(budget))).to(device);
    const torch::Tensor score = press().scores(layer, cache, window).to(device, torch::kFloat32).expand({kv, n})
                                    .masked_fill(window, INFINITY).mean(0).to(torch::kCPU).contiguous();
    // Kept: the best `budget`, ties to the older token; the candidates: the best evicted ones, ties
    // to the later (kvpress flips them before a stable sort), in position order (slots are in
    // arrival order).
    const torch::Tensor kept_mask = top_k_mask(score.unsqueeze(0), budget)[0];
    const auto s = score.accessor<float, 1>();
    const auto is_kept = kept_mask.accessor<bool, 1>();
    std::vector<int64_t> kept, merge;
    for (int64_t i = 0; i < n; ++i) (is_kept[i] ? kept : merge).push_back(i);
    std::sort(merge.begin(), merge.end(), [&](int64_t a, int64_t b) { return s[a] > s[b] || (s[a] == s[b] && a > b); });
    merge.resize(std::min<int64_t>(candidates, static_cast<int64_t>(merge.size())));
    std::sort(merge.begin(), merge.end());
    const int64_t m = static_cast<int64_t>(merge.size());
    // Each candidate's window: the B kept slots after it, the ones past the end clamped to the
    // last kept and masked out (as kvpress, so the sums below add in its order).
    std::vector<int64_t> targets(m * B);
    std::vector<uint8_t> inside(m * B);
    std::vector<int64_t> sizes(m);
    for (int64_t j = 0; j < m; ++j) {
      const int64_t start = std::upper_bound(kept.begin(), kept.end(), merge[j]) - kept.begin();
      for (int64_t b = 0; b < B; ++b) {
        inside[j * B + b] = start + b < budget;
        targets[j * B + b] = kept[std::min(start + b, budget - 1)];
      }
      sizes[j] = std::min(B, budget - start);
    }
    const torch::Tensor target_slots = torch::tensor(targets, torch::kInt64).to(device);
    const torch::Tensor in_window = torch::tensor(inside, torch::kUInt8).to(torch::kBool).view({1, m, B}).to(device);
    const torch::Tensor size = torch::tensor(sizes, torch::kInt64).to(device);
    const torch::Tensor merge_slots = torch::tensor(merge, torch::kInt64).to(device);

    const torch::Tensor sum = cache.state(kCamAttentionSum, {}, cache.values().scalar_type());
    const torch::Tensor mean = (sum.index_select(1, target_slots).view({kv, m, B}) * in_window).sum(-1) / size.clamp_min(1);
    torch::Tensor p = sum.index_select(1, merge_slots) / mean;
    p = torch::where(p.isnan(), torch::zeros_like(p), p);
    p = torch::where(p.isinf(), torch::ones_like(p), p).clamp(0, 1);
    const torch::Tensor drawn = torch::bernoulli(p.to(torch::kCPU).contiguous(), generator_).to(device);

    torch::Tensor values = cache.values();
    torch::Tensor scale = (drawn / size).unsqueeze(-1);
    scale = torch::where((size == 0).view({1, m, 1}), torch::zeros_like(scale), scale);
    const torch::Tensor contributions = (values.index_select(1, merge_slots) * scale).unsqueeze(2).expand({kv, m, B, d}) *
                                        in_window.view({1, m, B, 1});
    values.index_add_(1, target_slots, contributions.reshape({kv, m * B, d}).to(values.scalar_type()));
    cache.keep(host_slots_on(kept, device));
  }

  int64_t interval_, merge_budget_;
  std::map<int64_t, int64_t> steps_;  // per layer: decode steps since the last compression
  at::Generator generator_;
};

const bool cam_registered = [] {
  const std::pair<const char*, const char*> keys[] = {{"kvpress:cam", ""},
                                                      {"kvpress:cam_knorm", "kvpress:knorm"},
                                                      {"kvpress:cam_streaming_llm", "kvpress:streaming_llm"},
                                                      {"kvpress:cam_tova", "kvpress:tova"}};
  for (const auto& [name, press] : keys)
    register_wrapper({name, "CAMPress", "while generating, as DecodingPress, evicted values merged at random into the kept tokens after them",
                      "kvpress cam_press.py (after Zhang et al., ICML 2024, openreview LCTmppB165)",
                      {compression_interval_param(),
                       params::Param::integer("merge_budget", 32, "kept tokens after an evicted one that its value may merge into", 1)},
                      press, "kvpress:knorm", nlohmann::json::object(),
                      "its merge candidates and windows are chosen on the host from the layer's scores",
                      [](const std::string& n, std::unique_ptr<SlotScorer> s, const nlohmann::json& p) {
                        return std::make_unique<CamPress>(n, std::move(s), p);
                      }});
  return true;
}();

const PolicyRefusal cam_adakv_snapkv_refusal(
    "kvpress:cam_adakv_snapkv",
    "kvpress's registry entry CAMPress(base_press=AdaKVPress(SnapKVPress())) fails at its first compression (CAMPress "
    "calls base_press.score, which AdaKVPress does not have: cam_press.py:137); CAMPress averages the scores over the KV "
    "heads, so kvpress:cam with press kvpress:snapkv is what it would otherwise keep");

}  // namespace
}  // namespace kvbench::policies::kvpress
