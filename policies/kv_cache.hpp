#pragma once
// The whole model's KV cache: one LayerCache per layer, one position mode.
#include <torch/torch.h>

#include <vector>

#include "policies/layer_cache.hpp"
#include "policies/position_mode.hpp"

namespace kvbench::policies {

class KVCache {
 public:
  KVCache(int64_t n_layers, int64_t kv_heads, int64_t head_dim, torch::TensorOptions options,
          PositionMode mode = PositionMode::kOriginal);

  int64_t n_layers() const { return static_cast<int64_t>(layers_.size()); }
  LayerCache& layer(int64_t i) { return layers_.at(i); }
  const LayerCache& layer(int64_t i) const { return layers_.at(i); }
  PositionMode position_mode() const { return mode_; }
  // Every layer's slot order (LayerCache::set_slot_order).
  void set_slot_order(SlotOrder order);

  int64_t logical_bytes() const;
  int64_t allocated_bytes() const;  // Σ LayerCache::allocated_bytes
  // The largest number of valid slots any layer/head holds now.
  int64_t max_head_length() const;
  void clear();

  // What rollback() returns to: every layer's size and eviction count.
  struct Mark {
    std::vector<int64_t> sizes, evictions;
  };
  Mark mark() const;
  // Drops every token appended since `mark`. Throws std::logic_error when a layer evicted since
  // then: the cache no longer holds what it held at the mark.
  void rollback(const Mark& mark);

 private:
  std::vector<LayerCache> layers_;
  PositionMode mode_;
};

}  // namespace kvbench::policies
