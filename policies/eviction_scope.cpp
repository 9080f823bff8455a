#include "policies/eviction_scope.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "policies/selection.hpp"

namespace kvbench::policies {

Scope parse_scope(const std::string& name) {
  if (name == "none") return Scope::kNone;
  if (name == "window") return Scope::kWindow;
  if (name == "std") return Scope::kStd;
  if (name == "easykv") return Scope::kEasyKV;
  throw std::invalid_argument("scope must be none, window, std or easykv, got '" + name + "'");
}

const char* to_string(Scope scope) {
  switch (scope) {
    case Scope::kNone: return "none";
    case Scope::kWindow: return "window";
    case Scope::kStd: return "std";
    case Scope::kEasyKV: return "easykv";
  }
  return "?";
}

bool needs_std(Scope scope) { return scope == Scope::kStd || scope == Scope::kEasyKV; }

torch::Tensor eviction_scope(const ScopeConfig& config, int64_t rows, int64_t n, int64_t evict, const torch::Device& device,
                             const torch::Tensor& std) {
  // Whatever is protected must leave `evict` slots to choose from.
  const int64_t sinks = std::clamp<int64_t>(config.sinks, 0, std::max<int64_t>(0, n - evict));
  const int64_t room = n - sinks - evict;  // slots that may still be protected
  torch::Tensor scope = torch::ones({rows, n}, torch::TensorOptions().dtype(torch::kBool).device(device));
  scope.narrow(1, 0, sinks).fill_(false);
  switch (config.scope) {
    case Scope::kNone: break;
    case Scope::kWindow: {
      const int64_t r = std::clamp<int64_t>(config.protect, 0, room);
      scope.narrow(1, n - r, r).fill_(false);
      break;
    }
    case Scope::kStd: {
      const int64_t r = std::clamp<int64_t>(config.protect, 0, room);
      torch::Tensor s = std.to(torch::kFloat64).clone();
      s.narrow(1, 0, sinks).fill_(-std::numeric_limits<double>::infinity());  // sinks are out already
      scope.logical_and_(top_k_mask(s, r).logical_not());                    // the r largest std
      break;
    }
    case Scope::kEasyKV: {
      const int64_t last = std::clamp<int64_t>(config.easykv_protect_last, 0, room);
      const int64_t candidates = std::clamp<int64_t>(config.easykv_candidates, evict, n - sinks - last);
      torch::Tensor s = std.to(torch::kFloat64).clone();
      s.narrow(1, 0, sinks).fill_(std::numeric_limits<double>::infinity());
      s.narrow(1, n - last, last).fill_(std::numeric_limits<double>::infinity());
      scope = top_k_mask(-s, candidates);  // the candidates of lowest std
      break;
    }
  }
  return scope;
}

}  // namespace kvbench::policies
