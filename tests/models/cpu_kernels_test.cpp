// The native CPU kernels of a decoding token against the tensor formulas they replace: RoPE
// bit for bit (the same float operations), RMSNorm to float32 rounding (its sum of squares runs in
// order, the tensor form's dot product in BLAS's order).
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include "models/cpu_kernels.hpp"
#include "models/rope.hpp"

namespace kvbench::models {
namespace {

ModelConfig rope_config(RopeStyle style) {
  ModelConfig c;
  c.head_dim = 16;
  c.rope_theta = 10000;
  c.rope_style = style;
  c.max_seq_len = 512;
  return c;
}

// apply() computes cos/sin for the positions it is given and combines the halves directly; the
// table path (native for a few rows, tensor ops for many) must give the same bits.
TEST(CpuKernels, RopeRowsEqualTheDirectFormulaBitForBit) {
  torch::Generator gen = at::detail::createCPUGenerator(3);
  for (const RopeStyle style : {RopeStyle::kInterleaved, RopeStyle::kHalfSplit}) {
    const Rope rope(rope_config(style));
    for (const int64_t T : {int64_t{1}, int64_t{3}, int64_t{600}}) {  // 600 × 12 × 16 > the native limit
      const int64_t first = 37;
      // Token-major q|k rows with a stride, as the forward's view into its qkv product.
      torch::Tensor qkv = torch::randn({T, 14, 16}, gen);
      torch::Tensor x = qkv.narrow(1, 0, 12);
      torch::Tensor positions = torch::arange(first, first + T, torch::kInt64);
      torch::Tensor expected = rope.apply(x.transpose(0, 1), positions).transpose(0, 1);
      ASSERT_TRUE(torch::equal(rope.apply_tokens(x, first), expected)) << "tokens, T " << T;
      torch::Tensor heads = x.transpose(0, 1);  // [heads, T, d]
      ASSERT_TRUE(torch::equal(rope.apply_heads(heads, first), rope.apply(heads, positions))) << "heads, T " << T;
    }
  }
}

TEST(CpuKernels, RmsNormRowMatchesTheTensorFormula) {
  torch::Generator gen = at::detail::createCPUGenerator(4);
  for (const int64_t n : {1, 7, 64, 4096}) {
    torch::Tensor x = torch::randn({1, n}, gen) * 3, w = torch::randn({n}, gen);
    const double eps = 1e-5;
    torch::Tensor expected = (x.to(torch::kFloat64) * torch::rsqrt(x.to(torch::kFloat64).square().mean(-1, true) + eps) *
                              w.to(torch::kFloat64)).to(torch::kFloat32);
    torch::Tensor got = cpu::rms_norm_row(x, w, eps);
    EXPECT_EQ(got.sizes(), x.sizes());
    EXPECT_TRUE(torch::allclose(got, expected, 1e-5, 1e-6)) << "n " << n << ": " << (got - expected).abs().max();
  }
}

// The decoding query's grouped attention against the bmm it replaces, with GQA groups, a strided
// query and a cache view whose rows sit in a larger buffer.
TEST(CpuKernels, GroupedDecodeAttentionMatchesBmm) {
  torch::Generator gen = at::detail::createCPUGenerator(5);
  const int64_t kvh = 4, g = 2, n = 37, d = 8;
  torch::Tensor qkv = torch::randn({1, kvh * g + 2 * kvh, d}, gen);
  torch::Tensor q = qkv.narrow(1, 0, kvh * g).transpose(0, 1);  // [H, 1, d], strided
  torch::Tensor K = torch::randn({kvh, 50, d}, gen).narrow(1, 0, n), V = torch::randn({kvh, 50, d}, gen).narrow(1, 0, n);
  ASSERT_TRUE(cpu::small_decode(q, K, V));
  const float scale = 0.35f;
  torch::Tensor expected = torch::bmm(q.reshape({kvh, g, d}), K.transpose(1, 2)) * scale;
  torch::Tensor scores = cpu::grouped_scores(q, K, scale);
  EXPECT_TRUE(torch::allclose(scores, expected, 1e-5, 1e-6)) << (scores - expected).abs().max();
  torch::Tensor probs = torch::softmax(scores, -1);
  torch::Tensor mixed = cpu::grouped_mix(probs, V);
  EXPECT_TRUE(torch::allclose(mixed, torch::bmm(probs, V), 1e-5, 1e-6)) << (mixed - torch::bmm(probs, V)).abs().max();
  // Blocks of queries, doubles and big products keep the tensor path.
  EXPECT_FALSE(cpu::small_decode(torch::randn({kvh * g, 2, d}), K, V));
  EXPECT_FALSE(cpu::small_decode(q.to(torch::kFloat64), K, V));
  EXPECT_FALSE(cpu::small_decode(torch::randn({32, 1, 128}), torch::randn({8, 4096, 128}), torch::randn({8, 4096, 128})));
}

}  // namespace
}  // namespace kvbench::models
