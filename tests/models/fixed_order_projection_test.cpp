// The decode step's projection kernel: each output element summed in the order its header states,
// so a row gives the same bits alone, among other rows, and on any thread count — what lets a
// ring's batched decode (models/decode_batch.hpp) give every session its own step's result.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cstring>

#include "models/fixed_order_projection.hpp"

namespace kvbench::models {
namespace {

// The header's order, one element at a time in scalar floats.
__attribute__((optimize("fp-contract=off"))) float documented_dot(const float* w, const float* x, int64_t n) {
  float lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) lanes[j] += w[i + j] * x[i + j];
  float sum = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
  for (; i < n; ++i) sum += w[i] * x[i];
  return sum;
}

bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  return a.sizes() == b.sizes() && std::memcmp(a.contiguous().data_ptr(), b.contiguous().data_ptr(), a.nbytes()) == 0;
}

TEST(FixedOrderProjection, EveryElementIsSummedInTheDocumentedOrder) {
  torch::Generator gen = at::detail::createCPUGenerator(5);
  // 771 inputs: 96 blocks of eight and a tail of 3; 37 outputs: every tile shape and a remainder.
  const torch::Tensor w = torch::randn({37, 771}, gen), x = torch::randn({5, 771}, gen);
  const torch::Tensor y = cpu::fixed_order_project(x, w, {});
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t o = 0; o < 37; ++o) {
      const float expected = documented_dot(w[o].data_ptr<float>(), x[r].data_ptr<float>(), 771);
      ASSERT_EQ(y[r][o].item<float>(), expected) << "row " << r << ", output " << o;
    }
  EXPECT_TRUE(torch::allclose(y, torch::matmul(x, w.t()), 1e-4, 1e-4));
}

TEST(FixedOrderProjection, ARowHasTheSameBitsAloneInABatchAndOnAnyThreadCount) {
  torch::Generator gen = at::detail::createCPUGenerator(6);
  for (const int64_t in : {int64_t{64}, int64_t{771}}) {
    const torch::Tensor w = torch::randn({2051, in}, gen), bias = torch::randn({2051}, gen);
    const torch::Tensor x = torch::randn({9, in}, gen), residual = torch::randn({9, 2051}, gen);
    const torch::Tensor batched = cpu::fixed_order_project(x, w, residual);
    const torch::Tensor with_bias = cpu::fixed_order_project(x, w, bias);
    EXPECT_TRUE(same_bits(cpu::fixed_order_project(x, w, residual, /*threads=*/3), batched));
    for (int64_t r = 0; r < 9; ++r) {
      const torch::Tensor row = x.narrow(0, r, 1);
      ASSERT_TRUE(same_bits(cpu::fixed_order_project(row, w, residual.narrow(0, r, 1)), batched.narrow(0, r, 1))) << r;
      ASSERT_TRUE(same_bits(cpu::fixed_order_project(row, w, bias), with_bias.narrow(0, r, 1))) << r;
      // The base is added after the sum, as addmv adds its vector.
      ASSERT_TRUE(same_bits(batched.narrow(0, r, 1), cpu::fixed_order_project(row, w, {}) + residual.narrow(0, r, 1))) << r;
    }
    // Rows taken out of a wider buffer (a stride between rows) read the same.
    const torch::Tensor wide = torch::cat({x, torch::randn({9, 5}, gen)}, 1).narrow(1, 0, in);
    EXPECT_TRUE(same_bits(cpu::fixed_order_project(wide, w, residual), batched));
  }
}

TEST(FixedOrderProjection, RefusesWhatItCannotRead) {
  const torch::Tensor w = torch::randn({8, 16}), x = torch::randn({2, 16});
  EXPECT_THROW(cpu::fixed_order_project(x, w.t().contiguous().t(), {}), std::invalid_argument);  // columns contiguous
  EXPECT_THROW(cpu::fixed_order_project(torch::randn({2, 15}), w, {}), std::invalid_argument);
  EXPECT_THROW(cpu::fixed_order_project(x.to(torch::kFloat64), w, {}), std::invalid_argument);
  EXPECT_THROW(cpu::fixed_order_project(x, w, torch::randn({3, 8})), std::invalid_argument);
}

}  // namespace
}  // namespace kvbench::models
