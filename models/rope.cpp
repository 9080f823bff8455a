#include "models/rope.hpp"

#include <cmath>

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

torch::Tensor Rope::apply(const torch::Tensor& x, const torch::Tensor& positions) const {
  const int64_t half = config_.head_dim / 2;
  const int64_t max_pos = positions.numel() ? positions.max().item<int64_t>() + 1 : 0;
  torch::Tensor inv = inverse_frequencies(max_pos).to(x.device());
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
