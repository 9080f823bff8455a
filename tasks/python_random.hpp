#pragma once
// CPython's `random` module (Mersenne Twister MT19937), for the reference pipelines that draw with
// it: random.seed(int), getrandbits, randrange(n) and shuffle produce Python's exact sequences, so a
// C++ task can pick the same few-shot examples as the Python reference (HELM's sample_examples).
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kvbench::tasks {

class PythonRandom {
 public:
  explicit PythonRandom(uint32_t seed) { this->seed(seed); }

  // random.seed(n) for 0 <= n < 2**32: init_by_array with the one-word key [n].
  void seed(uint32_t n);
  uint32_t next_uint32();       // genrand_uint32
  uint32_t getrandbits(int k);  // 1 <= k <= 32
  uint64_t randbelow(uint64_t n);  // random.randrange(n), n in [1, 2**32)

  // random.shuffle(x): for i from len-1 down to 1, swap x[i] with x[randbelow(i + 1)].
  template <typename T>
  void shuffle(std::vector<T>& x) {
    for (std::size_t i = x.size(); i-- > 1;) std::swap(x[i], x[static_cast<std::size_t>(randbelow(i + 1))]);
  }

 private:
  std::array<uint32_t, 624> mt_{};
  int index_ = 625;
};

}  // namespace kvbench::tasks
