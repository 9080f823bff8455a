#include "policies/kv_cache.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kvbench::policies {

KVCache::KVCache(int64_t n_layers, int64_t kv_heads, int64_t head_dim, torch::TensorOptions options, PositionMode mode)
    : mode_(mode) {
  layers_.reserve(n_layers);
  for (int64_t i = 0; i < n_layers; ++i) layers_.emplace_back(kv_heads, head_dim, options);
}

int64_t KVCache::logical_bytes() const {
  int64_t total = 0;
  for (const auto& layer : layers_) total += layer.logical_bytes();
  return total;
}

int64_t KVCache::allocated_bytes() const {
  int64_t total = 0;
  for (const auto& layer : layers_) total += layer.allocated_bytes();
  return total;
}

int64_t KVCache::max_head_length() const {
  int64_t most = 0;
  for (const auto& layer : layers_) most = std::max(most, layer.max_head_length());
  return most;
}

void KVCache::set_slot_order(SlotOrder order) {
  for (auto& layer : layers_) layer.set_slot_order(order);
}

KVCache::Mark KVCache::mark() const {
  Mark m;
  for (const auto& layer : layers_) m.sizes.push_back(layer.size()), m.evictions.push_back(layer.evictions());
  return m;
}

void KVCache::rollback(const Mark& mark) {
  if (mark.sizes.size() != layers_.size()) throw std::invalid_argument("KVCache::rollback: a mark of another cache");
  for (size_t i = 0; i < layers_.size(); ++i)
    if (layers_[i].evictions() != mark.evictions[i] || layers_[i].size() < mark.sizes[i])
      throw std::logic_error("KVCache::rollback: layer " + std::to_string(i) + " evicted since the mark");
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i].truncate(mark.sizes[i]);
}

void KVCache::clear() {
  for (auto& layer : layers_) layer.clear();
}

const char* to_string(PositionMode mode) { return mode == PositionMode::kOriginal ? "original" : "cache_slot"; }

}  // namespace kvbench::policies
