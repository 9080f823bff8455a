#include "policies/order_statistic.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace kvbench::policies {

uint64_t order_key(double v) {
  uint64_t bits;
  v += 0.0;  // -0.0 → +0.0
  std::memcpy(&bits, &v, sizeof bits);
  return (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
}

uint64_t order_key(float v) {
  uint32_t bits;
  v += 0.0f;
  std::memcpy(&bits, &v, sizeof bits);
  const uint32_t key = (bits >> 31) ? ~bits : bits | (uint32_t{1} << 31);
  return static_cast<uint64_t>(key) << 32;
}

uint64_t order_key(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }

uint64_t kth_smallest_key(uint64_t* keys, size_t n, size_t k) {
  if (k < 1 || k > n) throw std::out_of_range("kth_smallest_key: k must be in [1, n]");
  // MSB first, one 11-bit digit a pass: histogram the candidates' digit, find the digit of the
  // k-th smallest, keep only the candidates that share it (a branch-free compaction).
  constexpr int kDigit = 11;
  std::array<uint32_t, (1 << kDigit)> histogram;
  // Leading bits every key shares need no pass (positions, or scores of one binade).
  uint64_t differ = 0;
  for (size_t i = 0; i < n; ++i) differ |= keys[i] ^ keys[0];
  if (differ == 0) return keys[0];
  size_t m = n, rank = k;
  for (int high = 64 - __builtin_clzll(differ); high > 0 && m > 1; high -= kDigit) {
    const int shift = std::max(high - kDigit, 0);
    const uint64_t mask = (uint64_t{1} << (high - shift)) - 1;
    histogram.fill(0);
    for (size_t i = 0; i < m; ++i) ++histogram[(keys[i] >> shift) & mask];
    uint64_t digit = 0;
    while (histogram[digit] < rank) rank -= histogram[digit++];
    size_t kept = 0;
    for (size_t i = 0; i < m; ++i) {
      const uint64_t key = keys[i];
      keys[kept] = key;
      kept += ((key >> shift) & mask) == digit;
    }
    m = kept;
  }
  return keys[0];  // the only candidate left, or every one left shares every digit
}

namespace {

template <typename T>
T value_of(uint64_t key) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<int64_t>(key ^ (uint64_t{1} << 63));
  } else if constexpr (std::is_same_v<T, double>) {
    const uint64_t bits = (key >> 63) ? key & ~(uint64_t{1} << 63) : ~key;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  } else {
    const auto high = static_cast<uint32_t>(key >> 32);
    const uint32_t bits = (high >> 31) ? high & ~(uint32_t{1} << 31) : ~high;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
}

template <typename T>
torch::Tensor kth_largest_cpu(const torch::Tensor& values, int64_t k) {
  const torch::Tensor in = values.contiguous();
  const int64_t rows = in.size(0), n = in.size(1);
  torch::Tensor out = torch::empty({rows, 1}, in.options());
  const T* data = in.data_ptr<T>();
  T* result = out.data_ptr<T>();
  std::vector<uint64_t> keys(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) keys[j] = order_key(data[r * n + j]);
    result[r] = value_of<T>(kth_smallest_key(keys.data(), keys.size(), static_cast<size_t>(n - k + 1)));
  }
  return out;
}

}  // namespace

torch::Tensor kth_largest(const torch::Tensor& values, int64_t k) {
  if (values.dim() != 2) throw std::invalid_argument("kth_largest: values must be [rows, n]");
  const int64_t n = values.size(1);
  if (k < 1 || k > n) throw std::out_of_range("kth_largest: k must be in [1, n]");
  if (values.device().is_cpu() && values.size(0) > 0) {
    switch (values.scalar_type()) {
      case torch::kFloat32: return kth_largest_cpu<float>(values, k);
      case torch::kFloat64: return kth_largest_cpu<double>(values, k);
      case torch::kInt64: return kth_largest_cpu<int64_t>(values, k);
      default: break;
    }
  }
  return std::get<0>(values.kthvalue(n - k + 1, 1, /*keepdim=*/true));
}

}  // namespace kvbench::policies
