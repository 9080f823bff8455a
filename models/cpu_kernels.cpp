#include "models/cpu_kernels.hpp"

#include <cmath>

namespace kvbench::models::cpu {

bool plain_f32(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 && t.is_contiguous();
}

torch::Tensor rms_norm_row(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const int64_t n = x.numel();
  const float* in = x.data_ptr<float>();
  const float* w = weight.data_ptr<float>();
  float squares = 0.0f;
  for (int64_t i = 0; i < n; ++i) squares += in[i] * in[i];
  const float inv = 1.0f / std::sqrt(squares / static_cast<float>(n) + static_cast<float>(eps));
  torch::Tensor out = torch::empty_like(x);
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) o[i] = in[i] * inv * w[i];
  return out;
}

torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, int64_t first,
                     int position_dim, bool interleaved) {
  const int64_t A = x.size(0), B = x.size(1), d = x.size(2), half = d / 2;
  torch::Tensor out = torch::empty({A, B, d}, torch::kFloat32);
  const float* xp = x.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t xa = x.stride(0), xb = x.stride(1), xd = x.stride(2);
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) {
      const float* row = xp + a * xa + b * xb;
      const int64_t position = first + (position_dim == 0 ? a : b);
      const float* c = cos.data_ptr<float>() + position * d;
      const float* s = sin.data_ptr<float>() + position * d;
      float* o = op + (a * B + b) * d;
      for (int64_t i = 0; i < d; ++i) {
        const int64_t j = interleaved ? (i ^ 1) : (i < half ? i + half : i - half);
        o[i] = row[i * xd] * c[i] + row[j * xd] * s[i];
      }
    }
  return out;
}

bool small_decode(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V) {
  auto rows_f32 = [](const torch::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == torch::kFloat32 && t.dim() == 3 && t.stride(2) == 1;
  };
  return q.size(1) == 1 && q.device().is_cpu() && q.scalar_type() == torch::kFloat32 && rows_f32(K) && rows_f32(V) &&
         K.stride(1) == K.size(2) && V.stride(1) == V.size(2) && q.size(0) * K.size(1) * K.size(2) <= (int64_t{1} << 17);
}

torch::Tensor grouped_scores(const torch::Tensor& q, const torch::Tensor& K, float scale) {
  const int64_t kvh = K.size(0), n = K.size(1), d = K.size(2), g = q.size(0) / kvh;
  torch::Tensor out = torch::empty({kvh, g, n}, torch::kFloat32);
  const float* qp = q.data_ptr<float>();
  const float* kp = K.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t qh = q.stride(0), qd = q.stride(2), kh = K.stride(0);
  for (int64_t h = 0; h < kvh; ++h)
    for (int64_t i = 0; i < g; ++i) {
      const float* query = qp + (h * g + i) * qh;
      float* row = op + (h * g + i) * n;
      for (int64_t j = 0; j < n; ++j) {
        const float* key = kp + h * kh + j * d;
        float dot = 0.0f;
        for (int64_t c = 0; c < d; ++c) dot += query[c * qd] * key[c];
        row[j] = dot * scale;
      }
    }
  return out;
}

torch::Tensor grouped_mix(const torch::Tensor& probs, const torch::Tensor& V) {
  const int64_t kvh = V.size(0), n = V.size(1), d = V.size(2), g = probs.size(1);
  torch::Tensor out = torch::zeros({kvh, g, d}, torch::kFloat32);
  const float* pp = probs.data_ptr<float>();
  const float* vp = V.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t vh = V.stride(0);
  for (int64_t h = 0; h < kvh; ++h)
    for (int64_t i = 0; i < g; ++i) {
      const float* p = pp + (h * g + i) * n;
      float* o = op + (h * g + i) * d;
      for (int64_t j = 0; j < n; ++j) {
        const float* value = vp + h * vh + j * d;
        for (int64_t c = 0; c < d; ++c) o[c] += p[j] * value[c];
      }
    }
  return out;
}

}  // namespace kvbench::models::cpu
