#pragma once
// RoCo's unified view, second axis (roco-easykv.txt §4.2–4.3): which slots may be evicted at all.
//   none    every slot (TOVA, Random)
//   window  all but the r most recent (H2O, ScissorHands, StreamLLM's local window)
//   std     all but the r slots whose received attention has the largest standard deviation
//           (RoCo: "persistence of attention robustness")
//   easykv  the EasyKV reference code's RoCo (kv_policy "roco"): the last `protect_last` slots
//           are protected, and the candidates are the (B − ⌊recent_ratio·B⌋ − sinks) slots of
//           lowest standard deviation (the policy picks recent_ratio and sinks by phase). Where
//           that exceeds the unprotected slots EasyKV's topk also draws protected ones (std 1e9,
//           tie order unspecified); here they stay protected
// Sinks (the first `sinks` slots) are outside every scope.
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "policies/layer_cache.hpp"

namespace kvbench::policies {

enum class Scope { kNone, kWindow, kStd, kEasyKV };
Scope parse_scope(const std::string& name);  // none | window | std | easykv
const char* to_string(Scope scope);
bool needs_std(Scope scope);

struct ScopeConfig {
  Scope scope = Scope::kStd;
  int64_t sinks = 0;
  int64_t protect = 0;            // r (window / std)
  int64_t easykv_protect_last = 10;
  int64_t easykv_candidates = 0;  // B − ⌊recent_ratio·B⌋ − sinks (at least the slots to evict)
};

// [rows, n] bool on `device`, true = may be evicted. `std` is [rows, n] on that device (needed by
// std / easykv). At least `evict` slots per row are always in scope: protections shrink when the
// cache is too small.
torch::Tensor eviction_scope(const ScopeConfig& config, int64_t rows, int64_t n, int64_t evict, const torch::Device& device,
                             const torch::Tensor& std = {});

}  // namespace kvbench::policies
