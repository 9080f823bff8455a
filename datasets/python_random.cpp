#include "datasets/python_random.hpp"

#include <stdexcept>
#include <unordered_set>

namespace kvbench::datasets {
namespace {
constexpr int N = 624, M = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU, kUpper = 0x80000000U, kLower = 0x7fffffffU;

int bit_length(uint64_t n) {
  int k = 0;
  for (; n; n >>= 1) ++k;
  return k;
}
}  // namespace

void Mt19937::init_genrand(uint32_t s) {
  mt_[0] = s;
  for (int i = 1; i < N; ++i) mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  index_ = N;
}

void Mt19937::init_by_array(const uint32_t* key, int key_length) {
  init_genrand(19650218U);
  int i = 1, j = 0;
  for (int k = N > key_length ? N : key_length; k; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] + static_cast<uint32_t>(j);
    ++i, ++j;
    if (i >= N) mt_[0] = mt_[N - 1], i = 1;
    if (j >= key_length) j = 0;
  }
  for (int k = N - 1; k; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= N) mt_[0] = mt_[N - 1], i = 1;
  }
  mt_[0] = 0x80000000U;
  index_ = N;
}

uint32_t Mt19937::next_uint32() {
  if (index_ >= N) {
    for (int kk = 0; kk < N; ++kk) {
      const uint32_t y = (mt_[kk] & kUpper) | (mt_[(kk + 1) % N] & kLower);
      mt_[kk] = mt_[(kk + M) % N] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
    }
    index_ = 0;
  }
  uint32_t y = mt_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= y >> 18;
  return y;
}

void PythonRandom::seed(uint32_t n) {
  const uint32_t key[1] = {n};  // CPython's random_seed: the absolute value's 32-bit words
  mt_.init_by_array(key, 1);
}

uint32_t PythonRandom::getrandbits(int k) {
  if (k < 1 || k > 32) throw std::invalid_argument("PythonRandom::getrandbits: k must be in [1, 32]");
  return next_uint32() >> (32 - k);
}

std::vector<uint32_t> PythonRandom::getrandbits_words(int k) {
  if (k < 1) throw std::invalid_argument("PythonRandom::getrandbits_words: k must be >= 1");
  if (k <= 32) return {getrandbits(k)};
  std::vector<uint32_t> words;
  for (; k > 0; k -= 32) {
    uint32_t r = next_uint32();
    if (k < 32) r >>= (32 - k);
    words.push_back(r);
  }
  return words;
}

uint64_t PythonRandom::randbelow(uint64_t n) {
  if (n == 0 || n >= (uint64_t{1} << 32)) throw std::invalid_argument("PythonRandom::randbelow: n must be in [1, 2**32)");
  const int k = bit_length(n);  // _randbelow_with_getrandbits
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

double PythonRandom::random() {
  const uint32_t a = next_uint32() >> 5, b = next_uint32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

std::vector<std::size_t> PythonRandom::sample_indices(std::size_t n, std::size_t k) {
  if (k > n) throw std::invalid_argument("random.sample: sample larger than population or is negative");
  std::vector<std::size_t> result(k);
  std::size_t setsize = 21;  // the size of a small set: pool selection below it
  if (k > 5) setsize += static_cast<std::size_t>(std::pow(4.0, std::ceil(std::log(static_cast<double>(k * 3)) / std::log(4.0))));
  if (n <= setsize) {
    std::vector<std::size_t> pool(n);
    for (std::size_t i = 0; i < n; ++i) pool[i] = i;
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t j = static_cast<std::size_t>(randbelow(n - i));
      result[i] = pool[j];
      pool[j] = pool[n - i - 1];  // move the non-selected item into the vacancy
    }
  } else {
    std::unordered_set<std::size_t> selected;
    for (std::size_t i = 0; i < k; ++i) {
      std::size_t j = static_cast<std::size_t>(randbelow(n));
      while (selected.count(j)) j = static_cast<std::size_t>(randbelow(n));
      selected.insert(j);
      result[i] = j;
    }
  }
  return result;
}

int64_t NumpyRandomState::randint(int64_t low, int64_t high) {
  if (high <= low) throw std::invalid_argument("np.random.randint: low >= high");
  const uint64_t rng = static_cast<uint64_t>(high - 1 - low);
  if (rng == 0) return low;
  if (rng > 0xFFFFFFFFULL) throw std::invalid_argument("NumpyRandomState::randint: ranges past 2**32 are not implemented");
  return low + static_cast<int64_t>(interval(rng));  // masked rejection on 32-bit draws
}

uint64_t NumpyRandomState::interval(uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = max;
  mask |= mask >> 1, mask |= mask >> 2, mask |= mask >> 4, mask |= mask >> 8, mask |= mask >> 16, mask |= mask >> 32;
  uint64_t value;
  if (max <= 0xFFFFFFFFULL) {
    while ((value = mt_.next_uint32() & mask) > max) {
    }
  } else {
    auto next64 = [this] {
      const uint64_t high = mt_.next_uint32();
      return (high << 32) | mt_.next_uint32();
    };
    while ((value = next64() & mask) > max) {
    }
  }
  return value;
}

std::vector<int64_t> NumpyRandomState::choice_without_replacement(int64_t n, int64_t k) {
  if (n < 0 || k < 0 || k > n) throw std::invalid_argument("np.random.choice: cannot take a larger sample than population when replace=False");
  std::vector<int64_t> arr(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) arr[i] = i;
  for (int64_t i = n - 1; i >= 1; --i) std::swap(arr[i], arr[interval(static_cast<uint64_t>(i))]);
  arr.resize(static_cast<size_t>(k));
  return arr;
}

}  // namespace kvbench::datasets
