#include "policies/gqa_mode.hpp"

#include <stdexcept>
#include <vector>

namespace kvbench::policies {

GqaMode parse_gqa_mode(const std::string& name) {
  if (name == "repeat") return GqaMode::kRepeat;
  if (name == "reduce") return GqaMode::kReduce;
  throw std::invalid_argument("gqa must be repeat or reduce, got '" + name + "'");
}

params::Param gqa_param() {
  return params::Param::choice("gqa", "repeat", {"repeat", "reduce"},
                               "GQA: repeat K/V to the query heads (the official code) or reduce scores to KV heads");
}

const char* to_string(GqaMode mode) { return mode == GqaMode::kRepeat ? "repeat" : "reduce"; }

void repeat_to_query_heads(LayerCache& cache, const SequenceInfo& info) {
  const int64_t stored = cache.kv_heads();
  if (info.n_heads <= stored) return;
  if (info.n_heads % stored != 0)
    throw std::invalid_argument("gqa repeat: " + std::to_string(info.n_heads) + " query heads are not a multiple of " +
                                std::to_string(stored) + " stored heads");
  if (!cache.all_valid()) throw std::logic_error("gqa repeat: cannot repeat a ragged cache");
  // The copy below starts in arrival order; repeating happens at the first eviction, before any slot moved.
  if (!cache.in_arrival_order()) throw std::logic_error("gqa repeat: the cache's slots are no longer in arrival order");
  const int64_t group = info.n_heads / stored, n = cache.size();
  LayerCache wide(info.n_heads, cache.head_dim(), cache.keys().options(), std::max<int64_t>(n, 1));
  wide.set_slot_order(cache.slot_order());
  if (n > 0) {
    wide.append(repeat_rows(cache.keys(), group), repeat_rows(cache.values(), group),
                cache.positions()[0]);
    // Heads may hold different positions after per-head eviction: copy them head by head.
    wide.positions().copy_(repeat_rows(cache.positions(), group));
  }
  cache = std::move(wide);
}

void append_model_heads(LayerCache& cache, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& positions) {
  const int64_t heads = k.size(0), stored = cache.kv_heads();
  if (stored == heads || heads == 0 || stored % heads != 0) return cache.append(k, v, positions);
  cache.append(repeat_rows(k, stored / heads), repeat_rows(v, stored / heads), positions);
}

torch::Tensor repeat_rows(const torch::Tensor& t, int64_t group) {
  if (group == 1) return t;
  std::vector<int64_t> wide = t.sizes().vec(), out = t.sizes().vec();
  wide.insert(wide.begin() + 1, group);
  out[0] *= group;
  return t.unsqueeze(1).expand(wide).reshape(out);
}

}  // namespace kvbench::policies
