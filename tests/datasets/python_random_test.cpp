// CPython's random and NumPy's legacy np.random, natively: the draws RULER's generators make,
// recorded from CPython 3.11 and NumPy (scripts/ruler_reference/record_unit_goldens.py).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>


#include "metrics/golden.hpp"
#include "datasets/python_random.hpp"

namespace kvbench::datasets {
namespace {

nlohmann::json golden() { return test::load_fixture("ruler/python_random.json"); }

// The decimal digits of a little-endian array of 32-bit words.
std::string decimal(std::vector<uint32_t> words) {
  std::string digits;
  auto zero = [&] {
    for (uint32_t w : words)
      if (w) return false;
    return true;
  };
  while (!zero()) {
    uint64_t rem = 0;
    for (std::size_t i = words.size(); i-- > 0;) {
      const uint64_t cur = (rem << 32) | words[i];
      words[i] = static_cast<uint32_t>(cur / 10);
      rem = cur % 10;
    }
    digits.insert(digits.begin(), static_cast<char>('0' + rem));
  }
  return digits.empty() ? "0" : digits;
}

std::vector<std::size_t> range(std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(PythonRandom, DrawsAsCPython) {
  const nlohmann::json g = golden();
  PythonRandom r(g["seed"].get<uint32_t>());
  for (const auto& x : g["random"]) EXPECT_EQ(r.random(), x.get<double>());
  EXPECT_EQ(decimal(r.getrandbits_words(128)), g["getrandbits128"].get<std::string>());
  for (const auto& x : g["randint"]) EXPECT_EQ(r.randint(1000000, 9999999), x.get<int64_t>());
  EXPECT_EQ(nlohmann::json(r.sample_indices(100000, 5)), g["sample_range_100000_5"]);  // the set strategy
  EXPECT_EQ(nlohmann::json(r.sample_indices(40, 4)), g["sample_range_40_4"]);
  EXPECT_EQ(nlohmann::json(r.sample_indices(10, 10)), g["sample_range_10_10"]);  // the pool strategy
  EXPECT_EQ(nlohmann::json(r.sample_indices(30, 25)), g["sample_range_30_25"]);
  EXPECT_EQ(nlohmann::json(r.choices(range(26), 6)), g["choices_26_6"]);
  std::vector<std::size_t> seven = range(7);
  for (const auto& x : g["choice_7"]) EXPECT_EQ(r.choice(seven), x.get<std::size_t>());
}

TEST(PythonRandom, SampleRefusesMoreThanThePopulation) {
  PythonRandom r(1);
  EXPECT_THROW(r.sample_indices(3, 4), std::invalid_argument);
}

TEST(NumpyRandomState, DrawsAsNumpysLegacyGenerator) {
  const nlohmann::json g = golden();
  NumpyRandomState a(42);
  for (const auto& x : g["numpy_seed42_randint_10000_99999"]) EXPECT_EQ(a.randint(10000, 99999), x.get<int64_t>());
  NumpyRandomState b(7);
  for (const auto& x : g["numpy_seed7_randint_0_3"]) EXPECT_EQ(b.randint(0, 3), x.get<int64_t>());
}

}  // namespace
}  // namespace kvbench::datasets
