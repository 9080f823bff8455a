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
#include "policies/keep_scored.hpp"
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

// ‖vW_o‖₁ of a token depends on its value alone: computed once, for a forward's new tokens (the
// cache's last n_queries slots), and kept as per-slot state that moves with its slot.
class ValueOutputNorms {
 public:
  void clear() { observed_.clear(); }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, int64_t heads) {
    if (!stats.output_projection.defined()) return;
    const int64_t fresh = std::min(cache.size(), std::max<int64_t>(stats.n_queries, 1));
    cache.state(kValueOutputL1)
        .narrow(1, cache.size() - fresh, fresh)
        .copy_(value_output_l1(cache.values().narrow(1, cache.size() - fresh, fresh), stats.output_projection, heads));
    observed_.insert(layer);
  }
  // [kv_heads, n], the norms of the layer's slots.
  torch::Tensor of(int64_t layer, LayerCache& cache, const std::string& who) const {
    if (!observed_.count(layer)) throw std::logic_error(who + ": compress() without the layer's output projection");
    return cache.state(kValueOutputL1);
  }

 private:
  std::set<int64_t> observed_;  // layers whose new tokens got their ‖vW_o‖₁
};

// kvpress's presses score their protected tokens (SnapKV's window) max + 1 (the largest score of
// the layer, every head): kvbench's presses leave them to the policy, so the wrappers score them so.
torch::Tensor with_protected_scored_max_plus_one(const torch::Tensor& scores, const torch::Tensor& protected_slots) {
  return torch::where(protected_slots, scores.amax({0, 1}) + 1, scores);
}

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
    norms_.clear();
    press_->begin(info);
  }
  bool slot_order_free() const override { return press_->slot_order_free(); }
  bool repeats_kv() const override { return press_->repeats_kv(); }
  int64_t recent(int64_t budget) const override { return press_->recent(budget); }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    press_->observe(layer, cache, stats, phase);
    norms_.observe(layer, cache, stats, info_.n_heads);
  }
  torch::Tensor scores(int64_t layer, LayerCache& cache, const torch::Tensor& protected_slots) override {
    const torch::Tensor norms = norms_.of(layer, cache, name_);
    const int64_t n = cache.size();
    torch::Tensor s = press_->scores(layer, cache, protected_slots).to(torch::kFloat32).expand({cache.kv_heads(), n});
    s = with_protected_scored_max_plus_one(s, protected_slots);  // so stage 1 takes them first
    const double kept = info_.compression_ratio ? (1 - *info_.compression_ratio) * static_cast<double>(n)
                                                : static_cast<double>(info_.budget);
    const int64_t first = std::min<int64_t>(n, static_cast<int64_t>(kept * first_stage_));
    torch::Tensor stage2 = (s + epsilon_) * norms;
    if (first <= 0) return stage2;
    return stage2.masked_fill(s.device().is_cpu() ? top_k_mask(s, first) : top_k_mask_by_ops(s, first), FLT_MAX);
  }

 private:
  std::string name_;
  std::unique_ptr<SlotScorer> press_;
  double epsilon_, first_stage_;
  SequenceInfo info_;
  ValueOutputNorms norms_;
};

// CriticalAdaKVPress: AdaKVPress's head budgets with CriticalKV's two stages inside each head.
// Per layer, budget B per head: each head's int(B·alpha) best are safe; head i's budget c_i is its
// share of the layer's H·B best scores; stage 1 keeps its int(c_i · first_stage_ratio) best by the
// press's score, stage 2 fills c_i by (score + epsilon) · ‖vW_o‖₁. kvpress masks the rest; kvbench
// evicts them (ragged heads).
class CriticalAdaKvPress : public WrapperPolicy {
 public:
  CriticalAdaKvPress(std::string name, std::unique_ptr<SlotScorer> press, const nlohmann::json& p)
      : WrapperPolicy(std::move(name), std::move(press)),
        alpha_(p.at("alpha_safeguard")), epsilon_(p.at("critical_epsilon")), first_stage_(p.at("first_stage_ratio")) {}
  StatsRequest wants() const override {
    StatsRequest r = WrapperPolicy::wants();
    r.output_projection = true;
    return r;
  }
  void begin(const SequenceInfo& info) override {
    WrapperPolicy::begin(info);
    norms_.clear();
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    WrapperPolicy::observe(layer, cache, stats, phase);
    norms_.observe(layer, cache, stats, info_.n_heads);
  }
  int64_t layer_budget(int64_t) const override { return ada_head_capacity(info_, alpha_); }

  void compress(int64_t layer, LayerCache& cache, Phase) override {
    const int64_t budget = std::max<int64_t>(1, info_.budget), heads = cache.kv_heads(), n = cache.size();
    const torch::Tensor counts = valid_counts(cache);
    if (counts.sum().item<int64_t>() <= heads * budget) return;
    const torch::Tensor norms = norms_.of(layer, cache, name()).to(torch::kCPU, torch::kFloat32);
    const torch::Tensor window = newest_valid(cache, std::min(budget, press().recent(budget))).to(torch::kCPU);
    const torch::Tensor invalid = cache.all_valid() ? torch::zeros({heads, n}, torch::kBool) : cache.valid().to(torch::kCPU).logical_not();
    torch::Tensor s = press().scores(layer, cache, window).to(torch::kCPU, torch::kFloat32).expand({heads, n}).clone();
    s = with_protected_scored_max_plus_one(s.masked_fill(invalid, -INFINITY), window);
    s.masked_fill_(top_k_mask(s, std::min(ada_safe(budget, alpha_), n)), FLT_MAX);
    // Head i's budget: its share of the layer's H·B best scores.
    const torch::Tensor head_budgets = top_k_mask(s.reshape({1, heads * n}), heads * budget).reshape({heads, n}).sum(1);
    torch::Tensor stage2 = torch::empty_like(s);
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t c = head_budgets[h].item<int64_t>();
      torch::Tensor row = s[h].unsqueeze(0);
      const int64_t first = static_cast<int64_t>(static_cast<double>(c) * first_stage_);
      if (first > 0) row = row.masked_fill(top_k_mask(row, std::min(first, n)), FLT_MAX);
      stage2[h].copy_(((row + epsilon_) * norms[h]).squeeze(0));
    }
    stage2.masked_fill_(invalid, -INFINITY);
    const torch::Tensor surplus = counts - head_budgets;
    const int64_t most = surplus.max().item<int64_t>();
    if (most <= 0) return;
    cache.evict(lowest_scored_slots(stage2.masked_fill(invalid, INFINITY), cache.positions().to(torch::kCPU), most,
                                    /*lowest_first=*/true),
                surplus);
  }

 private:
  double alpha_, epsilon_, first_stage_;
  ValueOutputNorms norms_;
};

params::Params critical_params() {
  return {params::Param::number("critical_epsilon", 1e-4, "added to the press's score before the ‖vW_o‖₁ rescaling (kvpress: epsilon)", 0),
          params::Param::number("first_stage_ratio", 0.5, "share of the kept tokens chosen by the press alone (stage 1)", 0, 1)};
}

// "kvpress:critical" and "kvpress:critical_adakv" take any press by name; the registry's keys fix it.
void register_critical(const std::string& name, const std::string& press, const nlohmann::json& press_defaults) {
  const WrapperInfo info{name, "CriticalKV", "stage 1 the press's best, stage 2 (score + ε)·‖vW_o‖₁",
                         "Feng et al. 2025 (arXiv 2502.03805); kvpress criticalkv_press.py", critical_params(), press,
                         "kvpress:snapkv", press_defaults, "",
                         [](const std::string& n, std::unique_ptr<SlotScorer> s, const nlohmann::json& p) {
                           return std::make_unique<ScoredPolicy>(n, std::make_unique<CriticalKvPress>(n, std::move(s), p));
                         }};
  // The scorer too, so that other wrappers take CriticalKV by name.
  ScorerRegistration({name, wrapper_params(info), [name, press](const nlohmann::json& p) {
                        return std::make_unique<CriticalKvPress>(name, make_scorer(press.empty() ? p.at("press").get<std::string>() : press, p), p);
                      }});
  register_wrapper(info);
}

void register_critical_adakv(const std::string& name, const std::string& press, const nlohmann::json& press_defaults) {
  params::Params own = critical_params();
  own.insert(own.begin(), alpha_safeguard_param());
  register_wrapper({name, "CriticalAdaKV", "Ada-KV's head budgets, CriticalKV's two stages in each head",
                    "Feng et al. 2025 (arXiv 2502.03805); kvpress criticalkv_press.py", own, press, "kvpress:snapkv",
                    press_defaults, kAdaReadsDevice,
                    [](const std::string& n, std::unique_ptr<SlotScorer> s, const nlohmann::json& p) {
                      return std::make_unique<CriticalAdaKvPress>(n, std::move(s), p);
                    }});
}

const bool critical_registered = [] {
  register_critical("kvpress:critical", "", nlohmann::json::object());
  register_critical("kvpress:critical_snapkv", "kvpress:snapkv", nlohmann::json::object());
  register_critical("kvpress:critical_expected_attention", "expected_attention", {{"use_vnorm", false}});
  register_critical_adakv("kvpress:critical_adakv", "", nlohmann::json::object());
  register_critical_adakv("kvpress:critical_adakv_snapkv", "kvpress:snapkv", nlohmann::json::object());
  register_critical_adakv("kvpress:critical_adakv_expected_attention", "expected_attention", {{"use_vnorm", false}});
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
