#pragma once
// CPython's `random` module (Mersenne Twister MT19937, Python 3.11's algorithms), for the reference
// pipelines that draw with it: random.seed(int), getrandbits, randrange, randint, random, choice,
// choices, sample and shuffle produce Python's exact sequences, so a C++ task picks the same
// few-shot examples as HELM's sample_examples and generates the same RULER samples as its scripts.
// NumpyRandomState is NumPy's legacy np.random.seed(int) / np.random.randint stream (RULER's
// variable tracking draws its values from it).
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kvbench::datasets {

// MT19937 itself: the state, one 32-bit output, the two seedings.
class Mt19937 {
 public:
  void init_genrand(uint32_t s);                         // Matsumoto-Nishimura's init_genrand
  void init_by_array(const uint32_t* key, int length);  // ... and init_by_array
  uint32_t next_uint32();                                // genrand_uint32

 private:
  std::array<uint32_t, 624> mt_{};
  int index_ = 625;
};

class PythonRandom {
 public:
  explicit PythonRandom(uint32_t seed) { this->seed(seed); }

  // random.seed(n) for 0 <= n < 2**32: init_by_array with the one-word key [n].
  void seed(uint32_t n);
  uint32_t next_uint32() { return mt_.next_uint32(); }
  uint32_t getrandbits(int k);  // 1 <= k <= 32
  // getrandbits(k) for any k >= 1: the integer's 32-bit words, least significant first (CPython
  // fills them in that order).
  std::vector<uint32_t> getrandbits_words(int k);
  uint64_t randbelow(uint64_t n);  // random.randrange(n), n in [1, 2**32)
  int64_t randint(int64_t a, int64_t b) { return a + static_cast<int64_t>(randbelow(static_cast<uint64_t>(b - a + 1))); }
  double random();  // random.random(): 53 bits from two draws

  // random.choice(seq)
  template <typename T>
  const T& choice(const std::vector<T>& seq) {
    return seq[static_cast<std::size_t>(randbelow(seq.size()))];
  }
  // random.choices(population, k=k) without weights: population[floor(random() * n)], k times.
  template <typename T>
  std::vector<T> choices(const std::vector<T>& population, std::size_t k) {
    std::vector<T> out;
    out.reserve(k);
    const double n = static_cast<double>(population.size());
    for (std::size_t i = 0; i < k; ++i) out.push_back(population[static_cast<std::size_t>(std::floor(random() * n))]);
    return out;
  }
  // random.sample(population, k) of a population of size n: the indices drawn, in order (index i
  // of a list, or the value i of range(n)). Python's two strategies: a shrinking pool when n is
  // small against k, else rejection of repeated indices.
  std::vector<std::size_t> sample_indices(std::size_t n, std::size_t k);
  template <typename T>
  std::vector<T> sample(const std::vector<T>& population, std::size_t k) {
    std::vector<T> out;
    out.reserve(k);
    for (std::size_t i : sample_indices(population.size(), k)) out.push_back(population[i]);
    return out;
  }

  // random.shuffle(x): for i from len-1 down to 1, swap x[i] with x[randbelow(i + 1)].
  template <typename T>
  void shuffle(std::vector<T>& x) {
    for (std::size_t i = x.size(); i-- > 1;) std::swap(x[i], x[static_cast<std::size_t>(randbelow(i + 1))]);
  }

 private:
  Mt19937 mt_;
};

// NumPy's legacy global generator (np.random.seed(n), np.random.randint(low, high)).
class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed) { mt_.init_genrand(seed); }  // mt19937_seed: init_genrand
  // randint(low, high) with high exclusive, high - low - 1 < 2**32: masked rejection on 32-bit draws.
  int64_t randint(int64_t low, int64_t high);
  // random_interval(max): a value in [0, max] by masked rejection (32-bit draws up to 2**32 - 1,
  // else 64-bit draws of two words, high first).
  uint64_t interval(uint64_t max);
  // choice(n, size=k, replace=False) without p: permutation(n)[:k], the permutation by the legacy
  // shuffle (for i from n - 1 down to 1, swap i with interval(i)). Holds n indices.
  std::vector<int64_t> choice_without_replacement(int64_t n, int64_t k);

 private:
  Mt19937 mt_;
};

}  // namespace kvbench::datasets
