#pragma once
// One layer's KV cache: keys and values [kv_heads, capacity, head_dim], the original position of
// every slot, and any per-slot policy state. Eviction is one operation, keep(), which gathers all
// of them with the same indices so that state can never drift from its slot.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvbench::policies {

class LayerCache {
 public:
  LayerCache(int64_t kv_heads, int64_t head_dim, torch::TensorOptions options, int64_t initial_capacity = 64);

  int64_t kv_heads() const { return kv_heads_; }
  int64_t head_dim() const { return head_dim_; }
  // Slots in use; equal for every head. Heads that keep fewer tokens (ragged, Ada-KV) have the
  // surplus slots marked invalid.
  int64_t size() const { return size_; }

  // Views over the slots in use (writable in place).
  torch::Tensor keys() const;       // [kv_heads, size, head_dim]
  torch::Tensor values() const;     // [kv_heads, size, head_dim]
  torch::Tensor positions() const;  // [kv_heads, size] int64, original token positions
  // [kv_heads, size] bool, or an undefined tensor when every slot is valid (the common case).
  torch::Tensor valid() const;
  bool all_valid() const { return !ragged_; }
  // Valid slots per head, [kv_heads] int64.
  torch::Tensor head_lengths() const;
  int64_t max_head_length() const;

  // Appends T new tokens to every head: k, v [kv_heads, T, head_dim]; positions [T] int64.
  // New per-slot state starts at zero.
  void append(const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& positions);

  // Keeps, per head, the slots idx[h, 0..counts[h]) in that order; idx is [kv_heads, m] (or
  // [1, m]: the same slots for every head) int64. Without counts every row keeps m slots.
  void keep(const torch::Tensor& idx, const torch::Tensor& counts = {});

  // Per-slot policy state, [kv_heads, size, extra...], zero-initialised on creation and for new
  // slots; gathered by keep() together with the keys.
  torch::Tensor state(const std::string& name, std::vector<int64_t> extra_dims = {},
                      torch::ScalarType dtype = torch::kFloat32);
  bool has_state(const std::string& name) const { return state_.count(name) > 0; }

  // Σ over heads of 2·valid_slots·head_dim·element_size.
  int64_t logical_bytes() const;

  void clear();

 private:
  void reserve(int64_t capacity);

  int64_t kv_heads_;
  int64_t head_dim_;
  torch::TensorOptions options_;
  int64_t capacity_ = 0;
  int64_t size_ = 0;
  bool ragged_ = false;
  torch::Tensor keys_, values_, positions_, valid_;
  std::map<std::string, torch::Tensor> state_;
};

}  // namespace kvbench::policies
