// The CUDA path (skipped without a GPU): the same model on CUDA gives the CPU's logits in fp32
// and close ones in bf16, and every policy keeps its budget on device tensors.
#include <gtest/gtest.h>
#include <torch/version.h>

// The synchronisation debug mode lives in the CUDA build's c10_cuda (libtorch 2.x).
#if TORCH_VERSION_MAJOR >= 2 && __has_include(<c10/cuda/CUDAFunctions.h>)
#include <c10/cuda/CUDAFunctions.h>
#define KVBENCH_SYNC_DEBUG 1
#endif

#include "models/generation.hpp"
#include "models/model_loader.hpp"
#include "policies/registry.hpp"
#include "every_policy.hpp"

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
    if (kvbench::testing::policy_refuses(info.name, Protocol::kStream, true) || kvbench::testing::prefill_only(info.name))
      continue;
    auto policy = policies::make_policy(info.name, kvbench::testing::runnable_params(info.name, loaded_.config));
    SessionOptions options;
    options.protocol = Protocol::kStream;
    options.block = 7;
    options.budget = policies::Budget::tokens(32);
    InferenceSession session(gpu, policy.get(), options);
    torch::Tensor logits = session.prefill(tokens);
    for (int s = 0; s < 5; ++s) logits = session.step(logits.reshape({-1}).argmax().item<int64_t>());
    EXPECT_TRUE(logits.is_cuda()) << info.name;
    if (info.name != "full") {
      EXPECT_LE(session.cache().max_head_length(), policy->layer_budget(0)) << info.name;  // layer 0's is the largest
    }
  }
}

// Policies that score an observation window (SnapKV, PyramidKV, Ada-KV) take the fused kernel for
// the prompt's output and a second pass over the window for their statistics: on the GPU they keep
// what the CPU keeps (float32; near-ties may flip, so almost all) and decode to close logits.
TEST_F(Cuda, WindowScoredPrefillKeepsWhatTheCpuKeeps) {
  Transformer cpu(loaded_.config, loaded_.weights);
  Transformer gpu(loaded_.config, to_device(loaded_.weights, torch::kCUDA, torch::kFloat32));
  std::vector<int64_t> tokens{1};
  for (int i = 0; i < 150; ++i) tokens.push_back(3 + (i * 53) % 500);
  for (const char* name : {"snapkv", "pyramidkv", "adakv"}) {
    SessionOptions options;
    options.protocol = Protocol::kOneShot;
    options.budget = policies::Budget::tokens(48);
    auto p1 = policies::make_policy(name), p2 = policies::make_policy(name);
    InferenceSession on_cpu(cpu, p1.get(), options), on_gpu(gpu, p2.get(), options);
    torch::Tensor a = on_cpu.prefill(tokens), b = on_gpu.prefill(tokens);
    for (int s = 0; s < 3; ++s) {
      a = on_cpu.step(7 + s);
      b = on_gpu.step(7 + s);
    }
    EXPECT_LE((a - b.cpu()).abs().max().item<double>(), 1e-2) << name;
    int64_t same = 0, total = 0;
    for (int64_t l = 0; l < on_cpu.cache().n_layers(); ++l) {
      const auto& lc = on_cpu.cache().layer(l);
      const auto& lg = on_gpu.cache().layer(l);
      for (int64_t h = 0; h < lc.kv_heads(); ++h) {
        torch::Tensor pc = lc.positions()[h], pg = lg.positions()[h].cpu();
        if (lc.valid().defined()) pc = pc.masked_select(lc.valid()[h]);
        if (lg.valid().defined()) pg = pg.masked_select(lg.valid()[h].cpu());
        same += torch::isin(pc, pg).sum().item<int64_t>();
        total += pc.numel();
      }
    }
    EXPECT_GE(static_cast<double>(same), 0.95 * static_cast<double>(total)) << name << ": " << same << " of " << total;
  }
}

// Decode steps never wait for the device: no .item(), no copy to the host, no blocking copy to
// the device, in the model or in the policies registered as deciding on the device,
// checked by making every synchronisation an error while stepping (on the CPU: meta_device_test).
TEST_F(Cuda, DecodeStepsNeverSynchronise) {
#ifdef KVBENCH_SYNC_DEBUG
  Transformer gpu(loaded_.config, to_device(loaded_.weights, torch::kCUDA, torch::kFloat32));
  std::vector<int64_t> tokens{1};
  for (int i = 0; i < 60; ++i) tokens.push_back(3 + (i * 37) % 500);
  for (const auto& info : policies::registered_policies()) {
    if (!info.reads_device.empty()) continue;  // registered as reading the device when it evicts
    const std::string& name = info.name;
    auto policy = policies::make_policy(name);
    SessionOptions options;
    options.protocol = Protocol::kDecode;
    options.budget = name == "full" ? policies::Budget::unlimited() : policies::Budget::tokens(32);
    InferenceSession session(gpu, policy.get(), options);
    torch::Tensor logits = session.prefill(tokens);
    torch::cuda::synchronize();
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
    try {
      for (int s = 0; s < 8; ++s) logits = session.step(3 + (s * 11) % 500);  // tokens chosen on the host
      EXPECT_THROW(logits.cpu(), c10::Error) << "the debug mode is not active";  // a real sync does fail
    } catch (const c10::Error& e) {
      ADD_FAILURE() << name << ": a decode step synchronised: " << e.what();
    }
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
    for (int64_t l = 0; l < session.cache().n_layers(); ++l)
      EXPECT_LE(session.cache().layer(l).max_head_length(), name == "full" ? 69 : policy->layer_budget(l)) << name;
  }
#else
  GTEST_SKIP() << "needs libtorch 2.x built with CUDA (c10/cuda/CUDAFunctions.h)";
#endif
}

}  // namespace
}  // namespace kvbench::models
