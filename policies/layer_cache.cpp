#include "policies/layer_cache.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace kvbench::policies {
namespace {

// Above this many evicted slots evict() finds holes with one pass over the cache instead of
// comparing every evicted slot with every tail slot (e² work).
constexpr int64_t kPairwiseEvictLimit = 64;

torch::TensorOptions long_on(const torch::Tensor& like) {
  return torch::TensorOptions().dtype(torch::kInt64).device(like.device());
}

// arrival_after_moves on the CPU: one pass per row over the old order, renaming through a dense
// slot map (the tensor form costs seven passes and as many allocations).
torch::Tensor arrival_after_moves_cpu(const torch::Tensor& order_in, const torch::Tensor& discarded_in,
                                      const torch::Tensor& dst_in, const torch::Tensor& src_in,
                                      const torch::Tensor& real_in, int64_t m) {
  const int64_t n = discarded_in.size(1), r = std::max(discarded_in.size(0), order_in.size(0)), e = dst_in.size(1);
  const torch::Tensor order = order_in.expand({r, n}).contiguous(), discarded = discarded_in.expand({r, n}).contiguous();
  const torch::Tensor dst = dst_in.expand({r, e}).contiguous(), src = src_in.expand({r, e}).contiguous();
  const torch::Tensor real = real_in.expand({r, e}).contiguous();
  torch::Tensor out = torch::empty({r, m}, torch::kInt64);
  std::vector<int64_t> rename(static_cast<size_t>(n));
  for (int64_t h = 0; h < r; ++h) {
    const int64_t* from = order.data_ptr<int64_t>() + h * n;
    const bool* gone = discarded.data_ptr<bool>() + h * n;
    std::iota(rename.begin(), rename.end(), int64_t{0});
    for (int64_t i = 0; i < e; ++i)
      if (real.data_ptr<bool>()[h * e + i]) rename[src.data_ptr<int64_t>()[h * e + i]] = dst.data_ptr<int64_t>()[h * e + i];
    int64_t* to = out.data_ptr<int64_t>() + h * m;
    int64_t kept = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t slot = from[j];
      if (gone[slot]) continue;
      if (kept == m) throw std::logic_error("LayerCache: more survivors than slots after an eviction");
      to[kept++] = rename[slot];
    }
    if (kept != m) throw std::logic_error("LayerCache: fewer survivors than slots after an eviction");
  }
  return out;
}

}  // namespace

LayerCache::LayerCache(int64_t kv_heads, int64_t head_dim, torch::TensorOptions options, int64_t initial_capacity)
    : kv_heads_(kv_heads), head_dim_(head_dim), options_(options) {
  reserve(std::max<int64_t>(initial_capacity, 1));
}

// Buffers grow by doubling so appending is amortised O(1): no per-step concatenation.
void LayerCache::reserve(int64_t capacity) {
  if (capacity <= capacity_) return;
  // Buffers outlive the forward that grows them (which runs in InferenceMode): make them normal
  // tensors, so callers may still update them in place outside a forward.
  c10::InferenceMode normal_tensors(false);
  int64_t new_capacity = std::max<int64_t>(capacity, capacity_ * 2);
  auto grow = [&](torch::Tensor& buffer, std::vector<int64_t> shape, torch::TensorOptions options) {
    shape[1] = new_capacity;
    torch::Tensor fresh = torch::zeros(shape, options);
    if (buffer.defined() && size_ > 0) fresh.narrow(1, 0, size_).copy_(buffer.narrow(1, 0, size_));
    buffer = fresh;
  };
  auto device = options_.device();
  grow(keys_, {kv_heads_, 0, head_dim_}, options_);
  grow(values_, {kv_heads_, 0, head_dim_}, options_);
  grow(positions_, {kv_heads_, 0}, torch::TensorOptions().dtype(torch::kInt64).device(device));
  grow(valid_, {kv_heads_, 0}, torch::TensorOptions().dtype(torch::kBool).device(device));
  for (auto& [name, tensor] : state_) {
    auto shape = tensor.sizes().vec();
    grow(tensor, shape, tensor.options());
  }
  capacity_ = new_capacity;
}

torch::Tensor LayerCache::keys() const { return keys_.narrow(1, 0, size_); }
torch::Tensor LayerCache::values() const { return values_.narrow(1, 0, size_); }
torch::Tensor LayerCache::positions() const { return positions_.narrow(1, 0, size_); }
torch::Tensor LayerCache::valid() const { return ragged_ ? valid_.narrow(1, 0, size_) : torch::Tensor(); }

torch::Tensor LayerCache::head_lengths() const {
  if (!ragged_) return torch::full({kv_heads_}, size_, torch::kInt64);
  return valid_.narrow(1, 0, size_).sum(1).to(torch::kCPU, torch::kInt64);
}

int64_t LayerCache::max_head_length() const {
  if (!ragged_) return size_;
  return head_lengths().max().item<int64_t>();
}

torch::Tensor LayerCache::arrival_order() const {
  if (in_arrival_order_) return torch::arange(size_, long_on(positions_)).unsqueeze(0);
  torch::Tensor memo = current_arrival_memo();
  if (memo.defined() && memo.size(0) == (homogeneous_ ? 1 : kv_heads_)) return memo;
  torch::Tensor pos = homogeneous_ ? positions().narrow(0, 0, 1) : positions();
  torch::Tensor order = std::get<1>(pos.sort(/*stable=*/true, /*dim=*/1, /*descending=*/false));
  set_arrival_memo(order);
  return order;
}

torch::Tensor LayerCache::current_arrival_memo() const {
  const ArrivalMemo& memo = arrival_memo_;
  if (!memo.order.defined() || memo.buffer != positions_.unsafeGetTensorImpl() || memo.size != size_ ||
      memo.version != static_cast<int64_t>(positions_._version()))
    return {};
  return memo.order;
}

void LayerCache::set_arrival_memo(torch::Tensor order) const {
  arrival_memo_ = {positions_.unsafeGetTensorImpl(), static_cast<int64_t>(positions_._version()), size_, std::move(order)};
}

void LayerCache::append(const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& positions) {
  const int64_t t = k.size(1);
  if (k.size(0) != kv_heads_ || k.size(2) != head_dim_ || v.sizes() != k.sizes() || positions.numel() != t)
    throw std::invalid_argument("LayerCache::append: shape mismatch");
  torch::Tensor order = current_arrival_memo();  // new tokens are the newest: they go last
  reserve(size_ + t);
  const bool host = keys_.device().is_cpu() && k.device().is_cpu() && v.device().is_cpu() && positions.device().is_cpu() &&
                    k.scalar_type() == keys_.scalar_type() && v.scalar_type() == keys_.scalar_type() &&
                    positions.scalar_type() == torch::kInt64;
  if (host) {
    append_on_host(k, v, positions);
  } else {
    keys_.narrow(1, size_, t).copy_(k);
    values_.narrow(1, size_, t).copy_(v);
    positions_.narrow(1, size_, t).copy_(positions.reshape({1, t}).expand({kv_heads_, t}));
    // valid_ is only read while ragged (keep() fills it when a cache becomes ragged).
    if (ragged_) valid_.narrow(1, size_, t).fill_(true);
    for (auto& [name, tensor] : state_) tensor.narrow(1, size_, t).zero_();
  }
  size_ += t;
  if (order.defined())
    set_arrival_memo(torch::cat({order, torch::arange(size_ - t, size_, order.options()).expand({order.size(0), t})}, 1));
}

void LayerCache::append_on_host(const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& positions_in) {
  const int64_t t = k.size(1), hd = head_dim_, cap = capacity_;
  const auto elem = static_cast<int64_t>(keys_.element_size());
  auto copy_rows = [&](torch::Tensor& buffer, const torch::Tensor& src) {
    char* dst = static_cast<char*>(buffer.data_ptr());
    const char* from = static_cast<const char*>(src.data_ptr());
    const int64_t s0 = src.stride(0), s1 = src.stride(1), s2 = src.stride(2);
    for (int64_t h = 0; h < kv_heads_; ++h)
      for (int64_t j = 0; j < t; ++j) {
        char* row = dst + ((h * cap + size_ + j) * hd) * elem;
        const char* in = from + (h * s0 + j * s1) * elem;
        if (s2 == 1) {
          std::memcpy(row, in, static_cast<size_t>(hd * elem));
        } else {
          for (int64_t d = 0; d < hd; ++d) std::memcpy(row + d * elem, in + d * s2 * elem, static_cast<size_t>(elem));
        }
      }
  };
  copy_rows(keys_, k);
  copy_rows(values_, v);
  const torch::Tensor positions = positions_in.reshape({t}).contiguous();
  int64_t* pos = positions_.data_ptr<int64_t>();
  for (int64_t h = 0; h < kv_heads_; ++h)
    std::copy(positions.data_ptr<int64_t>(), positions.data_ptr<int64_t>() + t, pos + h * cap + size_);
  // valid_ is only read while ragged (keep() fills it when a cache becomes ragged).
  if (ragged_) {
    bool* valid = valid_.data_ptr<bool>();
    for (int64_t h = 0; h < kv_heads_; ++h) std::fill(valid + h * cap + size_, valid + h * cap + size_ + t, true);
  }
  for (auto& [name, tensor] : state_) {  // [kv_heads, capacity, ...] contiguous
    const int64_t row = tensor.numel() / (kv_heads_ * cap) * static_cast<int64_t>(tensor.element_size());
    char* base = static_cast<char*>(tensor.data_ptr());
    for (int64_t h = 0; h < kv_heads_; ++h) std::memset(base + (h * cap + size_) * row, 0, static_cast<size_t>(t * row));
  }
}

void LayerCache::check_index(const torch::Tensor& idx, const char* what) const {
  if (idx.dim() != 2 || (idx.size(0) != kv_heads_ && idx.size(0) != 1))
    throw std::invalid_argument(std::string("LayerCache::") + what + ": idx must be [kv_heads, m] or [1, m]");
  // Reading the indices back would make a device wait for the host: checked where they live on the CPU.
  if (idx.device().is_cpu() && idx.numel() > 0 &&
      (idx.min().item<int64_t>() < 0 || idx.max().item<int64_t>() >= size_))
    throw std::out_of_range(std::string("LayerCache::") + what + ": slot index out of range");
}

void LayerCache::gather_all(const torch::Tensor& idx, int64_t m) {
  auto gather_into = [&](torch::Tensor& buffer) {
    torch::Tensor used = buffer.narrow(1, 0, size_);
    std::vector<int64_t> shape = idx.sizes().vec();
    torch::Tensor index = idx;
    for (int64_t d = 2; d < buffer.dim(); ++d) {
      index = index.unsqueeze(-1);
      shape.push_back(buffer.size(d));
    }
    torch::Tensor gathered = used.gather(1, index.expand(shape));
    buffer.narrow(1, 0, m).copy_(gathered);
  };
  gather_into(keys_);
  gather_into(values_);
  gather_into(positions_);
  gather_into(valid_);
  for (auto& [name, tensor] : state_) gather_into(tensor);
}

void LayerCache::move_slots(const torch::Tensor& dst, const torch::Tensor& src) {
  const bool shared = dst.size(0) == 1;
  auto move = [&](torch::Tensor& buffer) {
    if (shared) {  // the same slots on every head: one index_select / index_copy_ along the slots
      torch::Tensor moved = buffer.index_select(1, src[0]);
      buffer.index_copy_(1, dst[0], moved);
      return;
    }
    std::vector<int64_t> shape = dst.sizes().vec();
    torch::Tensor d = dst, s = src;
    for (int64_t k = 2; k < buffer.dim(); ++k) {
      d = d.unsqueeze(-1);
      s = s.unsqueeze(-1);
      shape.push_back(buffer.size(k));
    }
    torch::Tensor moved = buffer.gather(1, s.expand(shape));  // read everything before writing
    buffer.scatter_(1, d.expand(shape), moved);
  };
  move(keys_);
  move(values_);
  move(positions_);
  if (ragged_) move(valid_);  // otherwise every slot below size is valid already
  for (auto& [name, tensor] : state_) move(tensor);
}

// Evicted slots below the new size m are holes; surviving slots at or above m move into them,
// the i-th smallest hole receiving the i-th smallest survivor. Pairs beyond a row's hole count
// copy a discarded tail slot onto itself, so every row does the same amount of work and nothing
// is read back to the host.
void LayerCache::fill_holes(const torch::Tensor& evicted, int64_t e) {
  const int64_t n = size_, m = n - e, rows = evicted.size(0);
  if (e == 0) return;
  size_ = m;
  if (m == 0) return;
  in_arrival_order_ = false;  // conservatively: whether anything moved is only known on the device
  const int64_t w = std::min(e, m);
  auto opts = long_on(evicted);
  torch::Tensor hole_key = torch::arange(m, opts).expand({rows, m}).masked_fill(evicted.narrow(1, 0, m).logical_not(), n);
  torch::Tensor mover_key = torch::arange(m, n, opts).expand({rows, e}).masked_fill(evicted.narrow(1, m, e), 2 * n);
  torch::Tensor holes = std::get<0>(hole_key.topk(w, 1, /*largest=*/false, /*sorted=*/true));
  torch::Tensor movers = std::get<0>(mover_key.topk(w, 1, /*largest=*/false, /*sorted=*/true));
  torch::Tensor pad = torch::arange(m, m + w, opts).expand({rows, w});
  torch::Tensor real = holes < m;
  size_ = n;  // move_slots works on the old slots
  move_slots(torch::where(real, holes, pad), torch::where(real, movers, pad));
  size_ = m;
}

void LayerCache::keep(const torch::Tensor& idx_in, const torch::Tensor& counts) {
  check_index(idx_in, "keep");
  ++evictions_;
  const int64_t m = idx_in.size(1);
  torch::Tensor idx = idx_in.to(keys_.device(), torch::kInt64);
  if (idx.size(0) != 1) homogeneous_ = false;
  if (order_ == SlotOrder::kAny && !counts.defined() && m <= size_) {
    torch::Tensor evicted = torch::ones({idx.size(0), size_}, torch::TensorOptions().dtype(torch::kBool).device(idx.device()));
    evicted.scatter_(1, idx, false);
    fill_holes(evicted, size_ - m);
    return;
  }
  if (counts.defined() && !ragged_) valid_.narrow(1, 0, size_).fill_(true);  // see append()
  // kArrival: callers pass each row's slots in slot order, so arrival order survives the gather.
  gather_all(idx.expand({kv_heads_, m}).contiguous(), m);
  size_ = m;
  if (order_ == SlotOrder::kAny) in_arrival_order_ = false;
  if (counts.defined()) {
    torch::Tensor c = counts.to(keys_.device(), torch::kInt64).reshape({kv_heads_, 1});
    torch::Tensor slot = torch::arange(m, c.options()).reshape({1, m});
    valid_.narrow(1, 0, m).logical_and_(slot < c);
    ragged_ = m > 0 && !valid_.narrow(1, 0, m).all().item<bool>();
  } else {
    ragged_ = ragged_ && m > 0 && !valid_.narrow(1, 0, m).all().item<bool>();
  }
}

void LayerCache::keep_reordered(const torch::Tensor& idx_in) {
  check_index(idx_in, "keep_reordered");
  if (ragged_) throw std::logic_error("LayerCache::keep_reordered: the heads hold different numbers of tokens");
  ++evictions_;
  const int64_t m = idx_in.size(1);
  torch::Tensor idx = idx_in.to(keys_.device(), torch::kInt64);
  if (idx.size(0) != 1) homogeneous_ = false;
  gather_all(idx.expand({kv_heads_, m}).contiguous(), m);
  size_ = m;
  in_arrival_order_ = false;
}

void LayerCache::evict(const torch::Tensor& idx_in) {
  check_index(idx_in, "evict");
  ++evictions_;
  const int64_t e = idx_in.size(1), n = size_, rows = idx_in.size(0);
  if (e == 0) return;
  if (e > n) throw std::out_of_range("LayerCache::evict: more slots than the cache holds");
  torch::Tensor idx = idx_in.to(keys_.device(), torch::kInt64);
  if (rows != 1) homogeneous_ = false;
  auto bool_opts = torch::TensorOptions().dtype(torch::kBool).device(idx.device());
  if (order_ == SlotOrder::kArrival || ragged_ || e > kPairwiseEvictLimit) {
    torch::Tensor evicted = torch::zeros({rows, n}, bool_opts).scatter_(1, idx, true);
    if (order_ == SlotOrder::kAny && !ragged_) return fill_holes(evicted, e);
    // The survivors in slot order: the m smallest of (slot, or n for evicted slots).
    torch::Tensor key = torch::arange(n, long_on(idx)).expand({rows, n}).masked_fill(evicted, n);
    keep(std::get<0>(key.topk(n - e, 1, /*largest=*/false, /*sorted=*/true)));
    return;
  }
  // Few evictions: compare them with the e tail slots, no pass over the cache.
  torch::Tensor order = current_arrival_memo();  // updated below instead of re-sorted
  const int64_t m = n - e;
  size_ = m;
  if (m == 0) return;
  in_arrival_order_ = false;
  auto opts = long_on(idx);
  torch::Tensor tail = torch::arange(m, n, opts);
  torch::Tensor tail_evicted = idx.unsqueeze(2).eq(tail.reshape({1, 1, e})).any(1);  // [rows, e]
  torch::Tensor holes = std::get<0>(idx.masked_fill(idx >= m, n).sort(1));
  torch::Tensor movers = std::get<0>(tail.expand({rows, e}).masked_fill(tail_evicted, 2 * n).sort(1));
  torch::Tensor pad = tail.expand({rows, e});
  torch::Tensor real = holes < m;
  size_ = n;
  move_slots(torch::where(real, holes, pad), torch::where(real, movers, pad));
  size_ = m;
  if (!order.defined()) return;
  torch::Tensor gone = torch::zeros({rows, n}, torch::TensorOptions().dtype(torch::kBool).device(idx.device())).scatter_(1, idx, true);
  set_arrival_memo(arrival_after_moves(order, gone, holes, movers, real, m));
}

void LayerCache::evict(const torch::Tensor& idx_in, const torch::Tensor& counts_in) {
  check_index(idx_in, "evict");
  ++evictions_;
  if (counts_in.numel() != kv_heads_)
    throw std::invalid_argument("LayerCache::evict: ragged eviction needs one count per head");
  const int64_t n = size_, e = idx_in.size(1), heads = kv_heads_;
  torch::Tensor counts = counts_in.to(keys_.device(), torch::kInt64).reshape({heads, 1});
  if (e == 0 || counts.max().item<int64_t>() <= 0) return;
  if (counts.max().item<int64_t>() > e) throw std::out_of_range("LayerCache::evict: a count exceeds the slots given");
  torch::Tensor order = current_arrival_memo();  // updated below instead of re-sorted
  auto opts = long_on(counts);
  auto bool_opts = torch::TensorOptions().dtype(torch::kBool).device(counts.device());
  torch::Tensor idx = idx_in.to(counts.device(), torch::kInt64).expand({heads, e});
  // Entries past a row's count go to a sink column n.
  torch::Tensor used = torch::arange(e, opts).unsqueeze(0) < counts;
  torch::Tensor evicted = torch::zeros({heads, n + 1}, bool_opts).scatter_(1, torch::where(used, idx, n), true).narrow(1, 0, n);
  torch::Tensor gone = ragged_ ? evicted.logical_or(valid_.narrow(1, 0, n).logical_not()) : evicted;
  torch::Tensor gone_per_head = gone.sum(1);
  const int64_t m = n - gone_per_head.min().item<int64_t>();  // the longest head's length
  homogeneous_ = false;
  if (order_ == SlotOrder::kArrival) {  // every head's remaining slots, in slot order
    torch::Tensor key = torch::arange(n, opts).expand({heads, n}).masked_fill(gone, n);
    keep(std::get<1>(key.topk(m, 1, /*largest=*/false, /*sorted=*/true)), n - gone_per_head);
    return;
  }
  // kAny: head h's gone slots below m are its holes, its live slots at or above m its movers (a
  // head has at least as many holes as movers: it has no more live slots than the longest head).
  if (!ragged_) valid_.narrow(1, 0, n).fill_(true);
  ragged_ = true;  // move_slots moves the valid flags with their slots
  valid_.narrow(1, 0, n).logical_and_(evicted.logical_not());
  in_arrival_order_ = false;
  const int64_t w = std::min(n - m, m);
  if (w > 0) {
    torch::Tensor hole_key = torch::arange(m, opts).expand({heads, m}).masked_fill(gone.narrow(1, 0, m).logical_not(), n);
    torch::Tensor mover_key = torch::arange(m, n, opts).expand({heads, n - m}).masked_fill(gone.narrow(1, m, n - m), 2 * n);
    torch::Tensor holes = std::get<0>(hole_key.topk(w, 1, /*largest=*/false, /*sorted=*/true));
    torch::Tensor movers = std::get<0>(mover_key.topk(w, 1, /*largest=*/false, /*sorted=*/true));
    torch::Tensor real = movers < n;
    torch::Tensor pad = torch::arange(m, m + w, opts).expand({heads, w});  // discarded slots copied onto themselves
    torch::Tensor dst = torch::where(real, holes, pad), src = torch::where(real, movers, pad);
    move_slots(dst, src);
    size_ = m;  // before the memo, which is valid for the shrunk cache only
    if (order.defined()) {
      // Gone from the order: the tokens above m that did not move, and the holes' old tokens.
      torch::Tensor discarded = torch::zeros({heads, n + 1}, bool_opts);
      discarded.narrow(1, m, n - m).fill_(true);
      discarded.scatter_(1, torch::where(real, movers, n), false);
      discarded.scatter_(1, torch::where(real, holes, n), true);
      set_arrival_memo(arrival_after_moves(order, discarded.narrow(1, 0, n), dst, src, real, m));
    }
  }
  size_ = m;
  ragged_ = m > 0 && !valid_.narrow(1, 0, m).all().item<bool>();
}

// The order's surviving tokens keep their relative order (each one's new rank is a running count)
// and the movers are renamed to their holes.
torch::Tensor LayerCache::arrival_after_moves(torch::Tensor order, const torch::Tensor& discarded, const torch::Tensor& dst,
                                              const torch::Tensor& src, const torch::Tensor& real, int64_t m) const {
  const int64_t n = discarded.size(1), r = std::max(discarded.size(0), order.size(0)), e = dst.size(1);
  if (order.device().is_cpu()) return arrival_after_moves_cpu(order, discarded, dst, src, real, m);
  auto opts = long_on(order);
  order = order.expand({r, n});
  torch::Tensor kept = discarded.expand({r, n}).gather(1, order).logical_not();  // in arrival order
  torch::Tensor rank = torch::where(kept, kept.to(torch::kInt64).cumsum(1) - 1, m);  // column m: a sink for the discarded
  torch::Tensor survivors = torch::empty({r, m + 1}, opts).scatter_(1, rank, order).narrow(1, 0, m);
  torch::Tensor rename = torch::arange(n + 1, opts).expand({r, n + 1}).contiguous();  // slot n: a sink for non-moves
  rename.scatter_(1, torch::where(real, src, n).expand({r, e}), torch::where(real, dst, n).expand({r, e}));
  return rename.gather(1, survivors);
}

torch::Tensor LayerCache::state(const std::string& name, std::vector<int64_t> extra_dims, torch::ScalarType dtype) {
  auto it = state_.find(name);
  if (it == state_.end()) {
    c10::InferenceMode normal_tensors(false);  // as in reserve()
    std::vector<int64_t> shape{kv_heads_, capacity_};
    shape.insert(shape.end(), extra_dims.begin(), extra_dims.end());
    it = state_.emplace(name, torch::zeros(shape, torch::TensorOptions().dtype(dtype).device(keys_.device()))).first;
  }
  return it->second.narrow(1, 0, size_);
}

int64_t LayerCache::logical_bytes() const {
  const int64_t slots = ragged_ ? valid_.narrow(1, 0, size_).sum().item<int64_t>() : kv_heads_ * size_;
  return 2 * slots * head_dim_ * static_cast<int64_t>(keys_.element_size());
}

int64_t LayerCache::allocated_bytes() const {
  int64_t total = 0;
  for (const torch::Tensor* buffer : {&keys_, &values_, &positions_, &valid_})
    if (buffer->defined()) total += static_cast<int64_t>(buffer->nbytes());
  for (const auto& [name, tensor] : state_) total += static_cast<int64_t>(tensor.nbytes());
  return total;
}

void LayerCache::truncate(int64_t size) {
  if (size < 0 || size > size_) throw std::out_of_range("LayerCache::truncate: the cache holds fewer slots");
  size_ = size;
  arrival_memo_ = {};  // described the dropped slots too
}

void LayerCache::clear() {
  ++evictions_;
  size_ = 0;
  ragged_ = false;
  in_arrival_order_ = true;
  homogeneous_ = true;
  state_.clear();
}

}  // namespace kvbench::policies
