// Loading the golden vectors of ../shared/golden (and recorded fixtures) and comparing doubles bit
// for bit.
// nlohmann::json parses every float with std::strtod, so the Python repr strings round-trip to
// the exact doubles the reference computed.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <string>

#include <nlohmann/json.hpp>

namespace kvbench::test {

inline nlohmann::json load_golden(const std::string& name) {
  std::string path = std::string(KVBENCH_SHARED_DIR) + "/golden/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open golden file " + path);
  return nlohmann::json::parse(in);
}

// A JSON file under tests/fixtures/ (references recorded by running the official code).
inline nlohmann::json load_fixture(const std::string& relative) {
  std::string path = std::string(KVBENCH_TESTS_DIR) + "/fixtures/" + relative;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path);
  return nlohmann::json::parse(in);
}

inline uint64_t bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

inline bool same_bits(double a, double b) { return bits(a) == bits(b); }

// Bit-exact comparison with a readable failure (both values at 17 significant digits).
#define EXPECT_BITS_EQ(actual, expected, ctx)                                                     \
  do {                                                                                            \
    double kvb_a_ = (actual), kvb_e_ = (expected);                                               \
    EXPECT_TRUE(::kvbench::test::same_bits(kvb_a_, kvb_e_))                                       \
        << (ctx) << ": got " << ::testing::PrintToString(kvb_a_) << " expected "                  \
        << ::testing::PrintToString(kvb_e_) << std::setprecision(17) << " (" << kvb_a_ << " vs "  \
        << kvb_e_ << ")";                                                                         \
  } while (0)

}  // namespace kvbench::test
