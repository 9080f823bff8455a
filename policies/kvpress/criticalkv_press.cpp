// CriticalKVPress (Feng et al., "Identify Critical KV Cache in LLM Inference from an Output
// Perturbation Perspective", 2025; kvpress/presses/criticalkv_press.py): two stages around any
// press. Stage 1 keeps the press's best int(n_kept · first_stage_ratio) tokens per head (scored
// +max; the press's protected window first, as kvpress's max + 1 padding ranks it); stage 2 ranks the rest by (score + epsilon) · ‖v W_o‖₁, the L1 norm of the token's value
// through the output projection (per query head, averaged over the group): a token whose value
// barely moves the output is cheap to drop. With a `ratio:` budget the stage-1 count is kvpress's
// int((1 − r) · n · first_stage_ratio); with a token budget B, int(B · first_stage_ratio).
#include <cfloat>
#include <set>

#include "policies/gqa_mode.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

// [kv_heads, n]: ‖v_j W_o,h‖₁ per query head h of the group, averaged over the group. Chunked over
// the tokens so that at most ~2^24 products exist at once (kvpress materialises n × dim per head).
torch::Tensor value_output_l1(const torch::Tensor& values, const torch::Tensor& wo, int64_t heads) {
  const int64_t kv_heads = values.size(0), n = values.size(1), d = values.size(2), dim = wo.size(0);
  // W_oᵀ split by head, [heads, d, dim]: a view of W_o [dim, heads·d], no copy of it.
  const torch::Tensor per_head = wo.to(values.device(), torch::kFloat32).view({dim, heads, d}).permute({1, 2, 0});
  const torch::Tensor v = repeat_rows(values.to(torch::kFloat32), heads / kv_heads);           // [heads, n, d]
  const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 24) / std::max<int64_t>(1, heads * dim));
  std::vector<torch::Tensor> parts;
  for (int64_t start = 0; start < n; start += chunk)
    parts.push_back(torch::bmm(v.narrow(1, start, std::min(chunk, n - start)), per_head).abs().sum(-1));
  return mean_over_groups(torch::cat(parts, 1), kv_heads);
}

constexpr const char* kValueOutputL1 = "kvpress_value_output_l1";

class CriticalKvPress : public SlotScorer {
 public:
  CriticalKvPress(std::string name, std::unique_ptr<SlotScorer> press, const nlohmann::json& p)
      : name_(std::move(name)), press_(std::move(press)), epsilon_(p.at("critical_epsilon")), first_stage_(p.at("first_stage_ratio")) {}
  std::string name() const override { return name_; }
  StatsRequest wants() const override {
    StatsRequest r = press_->wants();
    r.output_projection = true;
    return r;
  }
  void begin(const SequenceInfo& info) override {
    info_ = info;
    observed_.clear();
    press_->begin(info);
  }
  bool slot_order_free() const override { return press_->slot_order_free(); }
  bool repeats_kv() const override { return press_->repeats_kv(); }
  int64_t recent(int64_t budget) const override { return press_->recent(budget); }
  // ‖vW_o‖₁ of a token depends on its value alone: computed once, for the forward's new tokens
  // (the cache's last n_queries slots), and kept as per-slot state that moves with its slot.
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    press_->observe(layer, cache, stats, phase);
    if (!stats.output_projection.defined()) return;
    const int64_t fresh = std::min(cache.size(), std::max<int64_t>(stats.n_queries, 1));
    torch::Tensor l1 = cache.state(kValueOutputL1);
    l1.narrow(1, cache.size() - fresh, fresh)
        .copy_(value_output_l1(cache.values().narrow(1, cache.size() - fresh, fresh), stats.output_projection, info_.n_heads));
    observed_.insert(layer);
  }
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor& protected_slots) override {
    if (!observed_.count(layer)) throw std::logic_error(name_ + ": compress() without the layer's output projection");
    const int64_t n = cache.size();
    torch::Tensor s = press_->scores(layer, cache, protected_slots).to(torch::kFloat32).expand({cache.kv_heads(), n});
    // kvpress's presses score their protected tokens (SnapKV's window) max + 1, so stage 1 takes
    // them first: kvbench's presses leave them to the policy, so the wrapper scores them so here.
    s = torch::where(protected_slots, s.amax({0, 1}) + 1, s);
    const double kept = info_.compression_ratio ? (1 - *info_.compression_ratio) * static_cast<double>(n)
                                                : static_cast<double>(info_.budget);
    const int64_t first = std::min<int64_t>(n, static_cast<int64_t>(kept * first_stage_));
    torch::Tensor stage2 = (s + epsilon_) * cache.state(kValueOutputL1);
    if (first <= 0) return stage2;
    return stage2.masked_fill(s.device().is_cpu() ? top_k_mask(s, first) : top_k_mask_by_ops(s, first), FLT_MAX);
  }

 private:
  std::string name_;
  std::unique_ptr<SlotScorer> press_;
  double epsilon_, first_stage_;
  SequenceInfo info_;
  std::set<int64_t> observed_;  // layers whose new tokens got their ‖vW_o‖₁
};

params::Params critical_params() {
  return {params::Param::number("critical_epsilon", 1e-4, "added to the press's score before the ‖vW_o‖₁ rescaling (kvpress: epsilon)", 0),
          params::Param::number("first_stage_ratio", 0.5, "share of the kept tokens chosen by the press alone (stage 1)", 0, 1)};
}

// "kvpress:critical" takes any press by name; the registry's keys fix it.
void register_critical(const std::string& name, const std::string& press, const nlohmann::json& press_defaults) {
  params::Params own = critical_params();
  if (press.empty()) own.insert(own.begin(), params::Param::text("press", "kvpress:snapkv", "the registered press wrapped (its parameters join these)"));
  auto make_scorer_of = [name, press](const nlohmann::json& p) {
    return std::make_unique<CriticalKvPress>(name, make_scorer(press.empty() ? p.at("press").get<std::string>() : press, p), p);
  };
  ScorerRegistration({name, own, make_scorer_of});
  PolicyRegistration({name, "CriticalKV around " + (press.empty() ? std::string("a press") : press) +
                                ": stage 1 the press's best, stage 2 (score + ε)·‖vW_o‖₁",
                      "Feng et al. 2025 (arXiv 2502.03805); kvpress criticalkv_press.py", own,
                      [name, make_scorer_of](const nlohmann::json& p) { return std::make_unique<ScoredPolicy>(name, make_scorer_of(p)); },
                      "", press, press.empty() ? "press" : "", press_defaults});
}

const bool critical_registered = [] {
  register_critical("kvpress:critical", "", nlohmann::json::object());
  register_critical("kvpress:critical_snapkv", "kvpress:snapkv", nlohmann::json::object());
  register_critical("kvpress:critical_expected_attention", "expected_attention", {{"use_vnorm", false}});
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
