#include "policies/layer_cache.hpp"

#include <algorithm>
#include <stdexcept>

namespace kvbench::policies {

LayerCache::LayerCache(int64_t kv_heads, int64_t head_dim, torch::TensorOptions options, int64_t initial_capacity)
    : kv_heads_(kv_heads), head_dim_(head_dim), options_(options) {
  reserve(std::max<int64_t>(initial_capacity, 1));
}

// Buffers grow by doubling so appending is amortised O(1): no per-step concatenation.
void LayerCache::reserve(int64_t capacity) {
  if (capacity <= capacity_) return;
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

void LayerCache::append(const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& positions) {
  const int64_t t = k.size(1);
  if (k.size(0) != kv_heads_ || k.size(2) != head_dim_ || v.sizes() != k.sizes() || positions.numel() != t)
    throw std::invalid_argument("LayerCache::append: shape mismatch");
  reserve(size_ + t);
  keys_.narrow(1, size_, t).copy_(k);
  values_.narrow(1, size_, t).copy_(v);
  positions_.narrow(1, size_, t).copy_(positions.reshape({1, t}).expand({kv_heads_, t}));
  valid_.narrow(1, size_, t).fill_(true);
  for (auto& [name, tensor] : state_) tensor.narrow(1, size_, t).zero_();
  size_ += t;
}

void LayerCache::keep(const torch::Tensor& idx_in, const torch::Tensor& counts) {
  if (idx_in.dim() != 2 || (idx_in.size(0) != kv_heads_ && idx_in.size(0) != 1))
    throw std::invalid_argument("LayerCache::keep: idx must be [kv_heads, m] or [1, m]");
  const int64_t m = idx_in.size(1);
  torch::Tensor idx = idx_in.to(keys_.device(), torch::kInt64).expand({kv_heads_, m}).contiguous();
  if (m > 0 && (idx.min().item<int64_t>() < 0 || idx.max().item<int64_t>() >= size_))
    throw std::out_of_range("LayerCache::keep: slot index out of range");
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
  size_ = m;
  if (counts.defined()) {
    torch::Tensor c = counts.to(keys_.device(), torch::kInt64).reshape({kv_heads_, 1});
    torch::Tensor slot = torch::arange(m, c.options()).reshape({1, m});
    valid_.narrow(1, 0, m).logical_and_(slot < c);
  }
  ragged_ = m > 0 && !valid_.narrow(1, 0, m).all().item<bool>();
}

torch::Tensor LayerCache::state(const std::string& name, std::vector<int64_t> extra_dims, torch::ScalarType dtype) {
  auto it = state_.find(name);
  if (it == state_.end()) {
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

void LayerCache::clear() {
  size_ = 0;
  ragged_ = false;
  state_.clear();
}

}  // namespace kvbench::policies
