// The CUDA path (skipped without a GPU): the same model on CUDA gives the CPU's logits in fp32
// and close ones in bf16, and every policy keeps its budget on device tensors.
#include <gtest/gtest.h>

#include "models/generation.hpp"
#include "models/model_loader.hpp"
#include "policies/registry.hpp"

namespace kvbench::models {
namespace {

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device: the CUDA path is checked on a GPU machine";
    loaded_ = load_model("stories260K");
  }
  std::vector<int64_t> prompt() const { return {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421}; }
  LoadedModel loaded_;
};

TEST_F(Cuda, Fp32LogitsMatchTheCpu) {
  Transformer cpu(loaded_.config, loaded_.weights);
  Transformer gpu(loaded_.config, to_device(loaded_.weights, torch::kCUDA, torch::kFloat32));
  auto c1 = cpu.make_cache(policies::PositionMode::kOriginal);
  auto c2 = gpu.make_cache(policies::PositionMode::kOriginal);
  torch::Tensor a = cpu.forward(prompt(), 0, c1, {}, true);
  torch::Tensor b = gpu.forward(prompt(), 0, c2, {}, true).cpu();
  EXPECT_LE((a - b).abs().max().item<double>(), 1e-3);
}

TEST_F(Cuda, Bf16GreedyStaysCloseToFp32) {
  Transformer gpu32(loaded_.config, to_device(loaded_.weights, torch::kCUDA, torch::kFloat32));
  Transformer gpu16(loaded_.config, to_device(loaded_.weights, torch::kCUDA, torch::kBFloat16));
  auto c1 = gpu32.make_cache(policies::PositionMode::kOriginal);
  auto c2 = gpu16.make_cache(policies::PositionMode::kOriginal);
  torch::Tensor a = gpu32.forward(prompt(), 0, c1, {}, true).cpu();
  torch::Tensor b = gpu16.forward(prompt(), 0, c2, {}, true).cpu();
  // bf16 has 8 mantissa bits: logits of magnitude ~10 move by a few tenths at most.
  EXPECT_LE((a - b).abs().max().item<double>(), 0.5);
  EXPECT_GE((a.argmax(-1) == b.argmax(-1)).to(torch::kFloat).mean().item<double>(), 0.8);
}

TEST_F(Cuda, EveryPolicyRunsOnDeviceWithinBudget) {
  Transformer gpu(loaded_.config, to_device(loaded_.weights, torch::kCUDA, torch::kFloat32));
  std::vector<int64_t> tokens{1};
  for (int i = 0; i < 120; ++i) tokens.push_back(3 + (i * 37) % 500);
  for (const auto& info : policies::registered_policies()) {
    auto policy = policies::make_policy(info.name);
    SessionOptions options;
    options.protocol = Protocol::kStream;
    options.block = 7;
    options.budget = policies::Budget::tokens(32);
    InferenceSession session(gpu, policy.get(), options);
    torch::Tensor logits = session.prefill(tokens);
    for (int s = 0; s < 5; ++s) logits = session.step(logits.reshape({-1}).argmax().item<int64_t>());
    EXPECT_TRUE(logits.is_cuda()) << info.name;
    if (info.name != "full") EXPECT_LE(session.cache().max_head_length(), policy->layer_budget(0) + 0) << info.name;
  }
}

}  // namespace
}  // namespace kvbench::models
