#include "models/rope.hpp"

#include <algorithm>
#include <cmath>

#include "models/cpu_kernels.hpp"

namespace kvbench::models {

Rope::Rope(const ModelConfig& config) : config_(config) {
  const int64_t half = config.head_dim / 2;
  // Same float32 arithmetic as llama2.c (1/theta^(2i/d)) and HF (theta^(arange(0,d,2)/d)).
  torch::Tensor i2 = torch::arange(0, config.head_dim, 2, torch::kFloat32) / static_cast<float>(config.head_dim);
  base_inv_freq_ = 1.0 / torch::pow(static_cast<float>(config.rope_theta), i2);
  const RopeScaling& s = config.rope_scaling;
  if (s.type == RopeScalingType::kLinear) {
    base_inv_freq_ = base_inv_freq_ / static_cast<float>(s.factor);
  } else if (s.type == RopeScalingType::kLlama3) {
    // Llama 3.1: long wavelengths are divided by factor, short ones kept, the band between smoothed.
    const double low_wavelen = s.original_max_position_embeddings / s.low_freq_factor;
    const double high_wavelen = s.original_max_position_embeddings / s.high_freq_factor;
    auto f = base_inv_freq_.accessor<float, 1>();
    for (int64_t i = 0; i < half; ++i) {
      const double freq = f[i];
      const double wavelen = 2 * M_PI / freq;
      if (wavelen < high_wavelen) continue;
      if (wavelen > low_wavelen) {
        f[i] = static_cast<float>(freq / s.factor);
      } else {
        const double smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                              (s.high_freq_factor - s.low_freq_factor);
        f[i] = static_cast<float>((1 - smooth) * freq / s.factor + smooth * freq);
      }
    }
  }
}

// Dynamic NTK rescales the base once the sequence outgrows the trained context (HF's rule).
torch::Tensor Rope::inverse_frequencies(int64_t seq_len) const {
  const RopeScaling& s = config_.rope_scaling;
  if (s.type != RopeScalingType::kDynamicNtk || seq_len <= config_.max_seq_len) return base_inv_freq_;
  const double d = static_cast<double>(config_.head_dim);
  const double base = config_.rope_theta *
                      std::pow(s.factor * seq_len / config_.max_seq_len - (s.factor - 1), d / (d - 2));
  torch::Tensor i2 = torch::arange(0, config_.head_dim, 2, torch::kFloat32) / static_cast<float>(d);
  return 1.0 / torch::pow(static_cast<float>(base), i2);
}

torch::Tensor Rope::apply(const torch::Tensor& x, const torch::Tensor& positions, int64_t seq_len) const {
  const int64_t half = config_.head_dim / 2;
  if (seq_len < 0) seq_len = positions.numel() ? positions.max().item<int64_t>() + 1 : 0;
  // Made on the host: a copy that does not block, as the tables' (no device is waited for).
  torch::Tensor inv = inverse_frequencies(seq_len).to(x.device(), /*non_blocking=*/true);
  torch::Tensor angles = positions.to(x.device(), torch::kFloat32).unsqueeze(-1) * inv.unsqueeze(0);  // [T, half]
  torch::Tensor cos = angles.cos().unsqueeze(0), sin = angles.sin().unsqueeze(0);        // [1, T, half]
  torch::Tensor xf = x.to(torch::kFloat32);
  torch::Tensor a, b;
  if (config_.rope_style == RopeStyle::kInterleaved) {
    torch::Tensor pairs = xf.reshape({x.size(0), x.size(1), half, 2});
    a = pairs.select(-1, 0);
    b = pairs.select(-1, 1);
    torch::Tensor out = torch::stack({a * cos - b * sin, a * sin + b * cos}, -1);
    return out.reshape(x.sizes()).to(x.scalar_type());
  }
  a = xf.narrow(-1, 0, half);
  b = xf.narrow(-1, half, half);
  return torch::cat({a * cos - b * sin, b * cos + a * sin}, -1).to(x.scalar_type());
}

Rope::Table Rope::table(torch::Device device, int64_t bound) const {
  const int64_t hd = config_.head_dim, half = hd / 2;
  auto make = [&](int64_t length) {
    // The arithmetic of apply(): float32 angles position·inv_freq, computed on the target device.
    torch::Tensor inv = inverse_frequencies(length).to(device, /*non_blocking=*/true);
    torch::Tensor angles = torch::arange(length, torch::TensorOptions().dtype(torch::kFloat32).device(device)).unsqueeze(-1) *
                           inv.unsqueeze(0);  // [length, half]
    torch::Tensor cos = angles.cos(), sin = angles.sin();
    if (config_.rope_style == RopeStyle::kInterleaved)
      return std::make_pair(torch::stack({cos, cos}, -1).reshape({length, hd}), torch::stack({-sin, sin}, -1).reshape({length, hd}));
    return std::make_pair(torch::cat({cos, cos}, -1), torch::cat({-sin, sin}, -1));
  };
  (void)half;
  std::lock_guard<std::mutex> lock(tables_->mutex);
  auto& entry = tables_->by_device[device.str()];
  if (!entry.first.defined() || entry.first.size(0) < bound) {
    int64_t length = std::max<int64_t>({bound, 2 * (entry.first.defined() ? entry.first.size(0) : 0), 4096});
    entry = make(length);
  }
  return entry;
}

// x·cos + partner(x)·sin, partner = the other element of each rotated pair: (b, a) for the
// half-split layout [a | b], pairs swapped for the interleaved one. With sin = (−sin, +sin) this is
// exactly apply()'s (a·cos − b·sin, b·cos + a·sin), term by term.
torch::Tensor Rope::rotate(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) const {
  const bool interleaved = config_.rope_style == RopeStyle::kInterleaved;
  const int64_t half = config_.head_dim / 2;
  torch::Tensor xf = x.to(torch::kFloat32);
  torch::Tensor partner;
  if (interleaved) {
    std::vector<int64_t> pairs = xf.sizes().vec();
    pairs.back() = half;
    pairs.push_back(2);
    partner = xf.reshape(pairs).flip(-1).reshape(xf.sizes());
  } else {
    partner = torch::cat({xf.narrow(-1, half, half), xf.narrow(-1, 0, half)}, -1);
  }
  torch::Tensor out = xf * cos;
  out.add_(partner.mul_(sin));
  return out.to(x.scalar_type());
}

// Dynamic NTK changes every frequency with the sequence length, so it has no reusable table and
// takes apply(), with positions made on x's device and the sequence length known here.
static bool dynamic(const ModelConfig& c) { return c.rope_scaling.type == RopeScalingType::kDynamicNtk; }
static torch::Tensor positions_on(const torch::Tensor& x, int64_t first, int64_t count) {
  return torch::arange(first, first + count, torch::TensorOptions().dtype(torch::kInt64).device(x.device()));
}

// A few float32 rows on the CPU (a decoding token's q and k): one native loop with rotate()'s
// arithmetic instead of ten ops.
static bool native(const torch::Tensor& x) {
  return x.dim() == 3 && x.numel() <= (int64_t{1} << 16) && x.device().is_cpu() && x.scalar_type() == torch::kFloat32;
}

torch::Tensor Rope::apply_tokens(const torch::Tensor& x, int64_t first) const {
  const int64_t T = x.size(0);
  if (dynamic(config_)) return apply(x.transpose(0, 1), positions_on(x, first, T), first + T).transpose(0, 1);
  auto [cos, sin] = table(x.device(), first + T);
  if (native(x)) return cpu::rotate(x, cos, sin, first, 0, config_.rope_style == RopeStyle::kInterleaved);
  return rotate(x, cos.narrow(0, first, T).unsqueeze(1), sin.narrow(0, first, T).unsqueeze(1));
}

torch::Tensor Rope::apply_tokens_at(const torch::Tensor& x, const torch::Tensor& positions, const Table& table) const {
  return rotate(x, table.first.index_select(0, positions).unsqueeze(1), table.second.index_select(0, positions).unsqueeze(1));
}

bool Rope::has_table() const { return !dynamic(config_); }

torch::Tensor Rope::apply_heads(const torch::Tensor& x, int64_t first) const {
  const int64_t n = x.size(1);
  if (dynamic(config_)) return apply(x, positions_on(x, first, n), first + n);
  auto [cos, sin] = table(x.device(), first + n);
  if (native(x)) return cpu::rotate(x, cos, sin, first, 1, config_.rope_style == RopeStyle::kInterleaved);
  return rotate(x, cos.narrow(0, first, n).unsqueeze(0), sin.narrow(0, first, n).unsqueeze(0));
}

torch::Tensor Rope::apply_heads_at(const torch::Tensor& x, const torch::Tensor& positions, int64_t bound) const {
  if (dynamic(config_)) return apply(x, positions, bound);
  auto [cos, sin] = table(x.device(), bound);
  return rotate(x, cos.index_select(0, positions).unsqueeze(0), sin.index_select(0, positions).unsqueeze(0));
}

const char* to_string(RopeStyle style) { return style == RopeStyle::kInterleaved ? "interleaved" : "half_split"; }

const char* to_string(RopeScalingType type) {
  switch (type) {
    case RopeScalingType::kNone: return "none";
    case RopeScalingType::kLinear: return "linear";
    case RopeScalingType::kDynamicNtk: return "dynamic";
    case RopeScalingType::kLlama3: return "llama3";
  }
  return "?";
}

}  // namespace kvbench::models
