#include "tasks/python_random.hpp"

#include <stdexcept>

namespace kvbench::tasks {
namespace {
constexpr int N = 624, M = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU, kUpper = 0x80000000U, kLower = 0x7fffffffU;

int bit_length(uint64_t n) {
  int k = 0;
  for (; n; n >>= 1) ++k;
  return k;
}
}  // namespace

void PythonRandom::seed(uint32_t n) {
  // init_genrand(19650218) then init_by_array(key = [n], length 1), as CPython's random_seed.
  mt_[0] = 19650218U;
  for (int i = 1; i < N; ++i) mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  const uint32_t key[1] = {n};
  const int key_length = 1;
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

uint32_t PythonRandom::next_uint32() {
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

uint32_t PythonRandom::getrandbits(int k) {
  if (k < 1 || k > 32) throw std::invalid_argument("PythonRandom::getrandbits: k must be in [1, 32]");
  return next_uint32() >> (32 - k);
}

uint64_t PythonRandom::randbelow(uint64_t n) {
  if (n == 0 || n >= (uint64_t{1} << 32)) throw std::invalid_argument("PythonRandom::randbelow: n must be in [1, 2**32)");
  const int k = bit_length(n);  // _randbelow_with_getrandbits
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

}  // namespace kvbench::tasks
