// kth_largest's radix select against torch's kthvalue: every dtype it handles natively, values
// that share their leading digits (attention probabilities differ only in the low mantissa bits),
// heavy ties, ±inf, ±0 and k at both ends.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <limits>

#include "policies/order_statistic.hpp"

namespace kvbench::policies {
namespace {

void expect_kthvalue(const torch::Tensor& values, int64_t k, const std::string& what) {
  const int64_t n = values.size(1);
  torch::Tensor expected = std::get<0>(values.kthvalue(n - k + 1, 1, /*keepdim=*/true));
  torch::Tensor got = kth_largest(values, k);
  ASSERT_EQ(got.scalar_type(), values.scalar_type()) << what;
  ASSERT_EQ(got.sizes(), expected.sizes()) << what;
  ASSERT_TRUE(torch::equal(got, expected)) << what << ", k " << k << ": " << got.flatten().slice(0, 0, 4) << " vs "
                                           << expected.flatten().slice(0, 0, 4);
}

TEST(OrderStatistic, KthLargestEqualsKthvalue) {
  torch::Generator gen = at::detail::createCPUGenerator(21);
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto dtype : {torch::kFloat32, torch::kFloat64}) {
    for (const int64_t n : {1, 2, 7, 300, 4097}) {
      std::vector<std::pair<std::string, torch::Tensor>> cases = {
          {"softmax", torch::softmax(torch::randn({3, n}, gen).to(torch::kFloat64) * 3, -1)},
          {"near one", 1 + torch::rand({3, n}, gen).to(torch::kFloat64) * 1e-12},
          {"ties", torch::randint(-3, 4, {3, n}, gen).to(torch::kFloat64) / 4},
          {"wide", torch::randn({3, n}, gen).to(torch::kFloat64) * torch::pow(10.0, torch::randint(-30, 30, {3, n}, gen))},
      };
      torch::Tensor special = torch::randn({2, n}, gen).to(torch::kFloat64);
      special.view(-1).index_put_({torch::randint(0, 2 * n, {std::max<int64_t>(n / 3, 1)}, gen)}, 0.0);
      special.view(-1).index_put_({torch::randint(0, 2 * n, {std::max<int64_t>(n / 5, 1)}, gen)}, -0.0);
      special.view(-1).index_put_({torch::randint(0, 2 * n, {std::max<int64_t>(n / 7, 1)}, gen)}, inf);
      special.view(-1).index_put_({torch::randint(0, 2 * n, {std::max<int64_t>(n / 7, 1)}, gen)}, -inf);
      cases.emplace_back("special", special);
      for (auto& [name, values] : cases)
        for (const int64_t k : {int64_t{1}, n / 4 + 1, n / 2 + 1, n - 1, n})
          if (k >= 1) expect_kthvalue(values.to(dtype), k, name + " n " + std::to_string(n));
    }
  }
}

TEST(OrderStatistic, KthLargestOfIntegersAndOtherTypes) {
  torch::Generator gen = at::detail::createCPUGenerator(5);
  torch::Tensor big = torch::randint(-(int64_t{1} << 40), int64_t{1} << 40, {4, 1000}, gen);
  big.index_put_({0, 3}, std::numeric_limits<int64_t>::min());
  big.index_put_({1, 7}, std::numeric_limits<int64_t>::max());
  for (const int64_t k : {1, 2, 500, 999, 1000}) {
    expect_kthvalue(big, k, "int64");
    expect_kthvalue(torch::randint(-1, 5, {2, 1000}, gen), k, "int64 ties");
  }
  // A dtype without a native path (the kthvalue fallback) and the -0.0 / +0.0 value.
  expect_kthvalue(torch::randint(0, 9, {2, 50}, gen).to(torch::kInt32), 10, "int32");
  torch::Tensor zeros = torch::tensor({{-0.0, 0.0, -0.0}});
  EXPECT_EQ(kth_largest(zeros, 2).item<double>(), 0.0);
  EXPECT_THROW(kth_largest(zeros, 0), std::out_of_range);
  EXPECT_THROW(kth_largest(zeros, 4), std::out_of_range);
}

}  // namespace
}  // namespace kvbench::policies
