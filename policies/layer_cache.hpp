#pragma once
// One layer's KV cache: keys and values [kv_heads, capacity, head_dim], the original position of
// every slot, and any per-slot policy state. Eviction is one operation, keep() (or evict(), its
// complement), which moves all of them with the same indices so that state can never drift from
// its slot.
//
// Slot order. With SlotOrder::kArrival (the default) slots stay in arrival order: keep() gathers
// the whole cache, O(size · head_dim) per eviction. With SlotOrder::kAny a policy declares that it
// does not care where a token sits: keep()/evict() fill the evicted slots below the new size with
// the surviving slots above it, moving O(evicted · head_dim) elements, and the original positions
// (which travel with their slots) define "older" and "newer" (arrival_order()). New tokens are
// always appended after the last slot, so a forward's new keys are its last T slots in both modes.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvbench::policies {

enum class SlotOrder { kArrival, kAny };

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

  // kArrival (default) or kAny; see the header comment. Set before the first eviction.
  void set_slot_order(SlotOrder order) { order_ = order; }
  SlotOrder slot_order() const { return order_; }
  // True while slot order is known to be arrival order (always under kArrival).
  bool in_arrival_order() const { return in_arrival_order_; }
  // True while every head holds the same tokens in the same slots (every eviction so far used one
  // index row for all heads).
  bool homogeneous() const { return homogeneous_; }
  // Slot indices sorted oldest first (by original position, stable): [1, size] when the cache is
  // homogeneous, else [kv_heads, size]. arange(size) while in arrival order.
  torch::Tensor arrival_order() const;

  // Appends T new tokens to every head: k, v [kv_heads, T, head_dim]; positions [T] int64.
  // New per-slot state starts at zero.
  void append(const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& positions);
  // Room for `capacity` slots without growing (buffers otherwise double when full).
  void reserve(int64_t capacity);

  // Keeps, per head, the slots idx[h, 0..counts[h]); idx is [kv_heads, m] (or [1, m]: the same
  // slots for every head) int64, distinct per row. Under kArrival the kept slots end up in the
  // order given; under kAny (without counts) in an unspecified order, moving only the slots that
  // must move. Without counts every row keeps m slots.
  void keep(const torch::Tensor& idx, const torch::Tensor& counts = {});
  // Keeps the slots idx[h, :] ([kv_heads, m] or [1, m]) of every head in the order given, which
  // need not be slot order: R-KV holds its cache in score order, and that order is state (its max
  // pooling and redundancy read neighbouring slots). in_arrival_order() is false afterwards.
  void keep_reordered(const torch::Tensor& idx);
  // Removes, per head, the slots idx[h, :] ([kv_heads, e] or [1, e] int64, distinct per row):
  // keep() of the complement. Under kAny it costs O(e · head_dim) and no pass over the cache.
  void evict(const torch::Tensor& idx);
  // Ragged eviction (Ada-KV): removes, per head, the slots idx[h, 0..counts[h]) (idx [kv_heads, e],
  // counts [kv_heads] int64); the rest of a row is ignored. The cache shrinks to its longest head.
  // Under kAny each head's holes are refilled from its slots above the new size (O(evicted ·
  // head_dim) moves, one read back to the host for the new size); under kArrival every head keeps
  // its remaining valid slots in slot order.
  void evict(const torch::Tensor& idx, const torch::Tensor& counts);
  // How many keep()/evict()/clear() calls this cache has seen: a rollback checks that none ran
  // since its mark (KVCache::rollback).
  int64_t evictions() const { return evictions_; }
  // Drops the slots from `size` on. They are the newest appends when nothing was evicted since the
  // cache held `size` slots (the caller's guarantee); the kept slots and their state are untouched.
  void truncate(int64_t size);

  // Per-slot policy state, [kv_heads, size, extra...], zero-initialised on creation and for new
  // slots; moved by keep()/evict() together with the keys.
  torch::Tensor state(const std::string& name, std::vector<int64_t> extra_dims = {},
                      torch::ScalarType dtype = torch::kFloat32);
  bool has_state(const std::string& name) const { return state_.count(name) > 0; }

  // Σ over heads of 2·valid_slots·head_dim·element_size.
  int64_t logical_bytes() const;
  // What the buffers hold at their capacity: keys, values, positions, validity and every per-slot
  // state tensor (the memory the cache takes, as opposed to the tokens it keeps).
  int64_t allocated_bytes() const;

  void clear();

 private:
  void gather_all(const torch::Tensor& idx, int64_t m);
  // append()'s writes when everything is on the CPU in the cache's dtypes: element copies into
  // the buffers (a decode step appends one row a head: tensor copies would be ~10 dispatches).
  void append_on_host(const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& positions);
  // Copies slot src[r, i] into slot dst[r, i] in every buffer (rows 1 = the same for every head).
  void move_slots(const torch::Tensor& dst, const torch::Tensor& src);
  // kAny eviction given the [rows, n] mask of evicted slots (e per row).
  void fill_holes(const torch::Tensor& evicted_mask, int64_t e);
  void check_index(const torch::Tensor& idx, const char* what) const;
  // The remembered arrival order after slots dst[r, i] received src[r, i] where `real` and the
  // cache shrank to m: `discarded` [rows, n] marks the old slots whose token is gone from the
  // order (evicted, or overwritten as a hole). O(n), no sort.
  torch::Tensor arrival_after_moves(torch::Tensor order, const torch::Tensor& discarded, const torch::Tensor& dst,
                                    const torch::Tensor& src, const torch::Tensor& real, int64_t m) const;

  int64_t kv_heads_;
  int64_t head_dim_;
  torch::TensorOptions options_;
  int64_t capacity_ = 0;
  int64_t size_ = 0;
  int64_t evictions_ = 0;
  bool ragged_ = false;
  SlotOrder order_ = SlotOrder::kArrival;
  bool in_arrival_order_ = true;
  bool homogeneous_ = true;
  torch::Tensor keys_, values_, positions_, valid_;
  std::map<std::string, torch::Tensor> state_;
  // arrival_order() as last computed: reused while the positions buffer, its version counter
  // (bumped by every write, views included) and the size are the same, so the readers of one
  // eviction step share one sort. append() and the pairwise evict() update it in O(size) instead
  // of leaving the next reader a sort.
  struct ArrivalMemo {
    const void* buffer = nullptr;
    int64_t version = -1, size = -1;
    torch::Tensor order;
  };
  mutable ArrivalMemo arrival_memo_;
  // The memo if it describes the cache as it is now, else an undefined tensor.
  torch::Tensor current_arrival_memo() const;
  void set_arrival_memo(torch::Tensor order) const;
};

}  // namespace kvbench::policies
