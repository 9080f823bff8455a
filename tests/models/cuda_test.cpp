// The CUDA path (skipped without a GPU): the same model on CUDA gives the CPU's logits in fp32
// and close ones in bf16, and every policy keeps its budget on device tensors.
#include <gtest/gtest.h>
#include <torch/version.h>

// The synchronisation debug mode lives in the CUDA build's c10_cuda (libtorch 2.x).
#if TORCH_VERSION_MAJOR >= 2 && __has_include(<c10/cuda/CUDAFunctions.h>)
#include <c10/cuda/CUDAFunctions.h>
#define KVBENCH_SYNC_DEBUG 1
#endif

#include "models/attention.hpp"
#include "models/captured_pieces.hpp"
#ifdef KVBENCH_SPLIT_K_DECODE
#include "models/cuda/split_k_decode.hpp"
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

// A decoding step's dense work as CUDA graphs (SessionOptions::cuda_graphs): captured at the first
// step, replayed after, between the attentions that run as they are. The same kernels as the plain
// step, so the same logits bit for bit, in float32 and bf16, for the full cache and for policies
// evicting every step (StreamingLLM by slot rank, H2O and TOVA from statistics) or once (SnapKV),
// on the fused kernel and on split-K; and a replayed step does not synchronise.
TEST_F(Cuda, DecodeGraphsGiveThePlainStepsLogits) {
  if (!CapturedPieces::captures(torch::Device(torch::kCUDA))) GTEST_SKIP() << "this build has no CUDA graphs";
  std::vector<int64_t> tokens{1};
  for (int i = 0; i < 200; ++i) tokens.push_back(3 + (i * 37) % 500);
  std::vector<AttentionPath> paths{AttentionPath::kAuto};
#ifdef KVBENCH_SPLIT_K_DECODE
  paths.push_back(AttentionPath::kSplitK);
#endif
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    Transformer gpu(loaded_.config, to_device(loaded_.weights, torch::kCUDA, dtype));
    for (const std::string name : {"full", "streaming_llm", "h2o", "tova", "snapkv"}) {
      for (AttentionPath path : paths) {
        SCOPED_TRACE(name + (dtype == torch::kFloat32 ? " float32 " : " bfloat16 ") + attention_path_name(path));
        std::vector<torch::Tensor> logits;
        for (bool graphs : {false, true}) {
          auto policy = policies::make_policy(name);
          SessionOptions options;
          options.attention = path;
          options.cuda_graphs = graphs;
          if (name != "full") {
            options.protocol = name == "snapkv" ? Protocol::kOneShot : Protocol::kDecode;
            options.budget = policies::Budget::tokens(48);
          }
          InferenceSession session(gpu, policy.get(), options);
          torch::Tensor l = session.prefill(tokens);
          std::vector<torch::Tensor> steps;
          const int64_t graphed_before = gpu.graphed_steps();
          for (int s = 0; s < 24; ++s) {
            l = session.step(l.reshape({-1}).argmax().item<int64_t>());
            steps.push_back(l.cpu());
          }
          EXPECT_EQ(gpu.graphed_steps() - graphed_before, graphs ? 24 : 0);
          logits.push_back(torch::cat(steps));
        }
        EXPECT_TRUE(torch::equal(logits[0], logits[1])) << "largest difference " << (logits[0] - logits[1]).abs().max().item<double>();
      }
    }
  }
#ifdef KVBENCH_SYNC_DEBUG
  Transformer gpu(loaded_.config, to_device(loaded_.weights, torch::kCUDA, torch::kBFloat16));
  SessionOptions options;
  options.cuda_graphs = true;
  InferenceSession session(gpu, nullptr, options);
  torch::Tensor logits = session.prefill(tokens);
  logits = session.step(7);  // captures
  torch::cuda::synchronize();
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  try {
    for (int s = 0; s < 8; ++s) logits = session.step(3 + (s * 11) % 500);
  } catch (const c10::Error& e) {
    ADD_FAILURE() << "a replayed step synchronised: " << e.what();
  }
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
#endif
}

#ifdef KVBENCH_SPLIT_K_DECODE
// softmax(q·Kᵀ/√d)·V of one decoding query per head in float64 on the CPU, over the valid slots.
torch::Tensor reference_decode(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V,
                               const torch::Tensor& valid) {
  const int64_t H = q.size(0), kvh = K.size(0), g = H / kvh, hd = q.size(2);
  torch::Tensor q64 = q.cpu().to(torch::kFloat64).reshape({kvh, g, hd});
  torch::Tensor scores = torch::bmm(q64, K.cpu().to(torch::kFloat64).transpose(1, 2)) / std::sqrt(double(hd));
  if (valid.defined()) scores.masked_fill_(valid.cpu().logical_not().unsqueeze(1), -std::numeric_limits<double>::infinity());
  return torch::bmm(torch::softmax(scores, -1), V.cpu().to(torch::kFloat64)).reshape({H, 1, hd});
}

// The kernel against float64 over the shapes that stress its splits (one slot; fewer slots than a
// split; a split's tail; long caches; groups of 1, 4, 7 and 16; head_dim 64 and 128), keys and
// values as views of a larger buffer (the cache's layout), with and without invalid slots.
TEST(CudaSplitK, KernelMatchesFloat64) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  struct Shape { int64_t kvh, g, hd, n; };
  for (const Shape& s : {Shape{2, 1, 64, 1}, Shape{4, 7, 64, 30}, Shape{8, 4, 128, 4097}, Shape{1, 16, 128, 40000},
                         Shape{8, 4, 128, 32768}}) {
    for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
      for (bool ragged : {false, true}) {
        SCOPED_TRACE("kvh " + std::to_string(s.kvh) + " g " + std::to_string(s.g) + " hd " + std::to_string(s.hd) +
                     " n " + std::to_string(s.n) + (dtype == torch::kFloat32 ? " float32" : " bfloat16") +
                     (ragged ? " ragged" : ""));
        torch::manual_seed(s.n);
        auto opts = torch::TensorOptions().dtype(dtype).device(torch::kCUDA);
        const torch::Tensor keys_buffer = torch::randn({s.kvh, s.n + 17, s.hd}, opts);
        const torch::Tensor values_buffer = torch::randn({s.kvh, s.n + 17, s.hd}, opts);
        const torch::Tensor K = keys_buffer.narrow(1, 0, s.n), V = values_buffer.narrow(1, 0, s.n);
        const torch::Tensor q = (2 * torch::randn({s.kvh * s.g, 1, s.hd}, opts)).contiguous();
        torch::Tensor valid;
        if (ragged) {
          valid = torch::rand({s.kvh, s.n}, opts.dtype(torch::kFloat32)) > 0.3;
          valid.select(1, s.n - 1).fill_(true);  // every head sees at least one slot
        }
        ASSERT_TRUE(cuda::split_k_decode_applies(q, K, V));
        const torch::Tensor out = cuda::split_k_decode(q, K, V, valid).cpu().to(torch::kFloat64);
        const torch::Tensor ref = reference_decode(q, K, V, valid);
        // float32 arithmetic throughout; a bf16 output is rounded once more (2^-9 relative, 2^-8 allowed).
        const double relative = dtype == torch::kFloat32 ? 1e-5 : 1.0 / 256;
        const torch::Tensor excess = (out - ref).abs() - (1e-5 + relative * ref.abs());
        EXPECT_LE(excess.max().item<double>(), 0.0) << "largest difference " << (out - ref).abs().max().item<double>();
      }
    }
  }
}

// attend() takes the kernel on AttentionPath::kSplitK for a decoding query, and a model decodes
// the same tokens with it as with the fused kernel: the full cache (keys as views of the cache)
// and StreamingLLM under the decode protocol (evicting every step; keys rotated by slot rank).
TEST_F(Cuda, SplitKDecodeGivesTheFusedKernelsTokens) {
  Transformer gpu(loaded_.config, to_device(loaded_.weights, torch::kCUDA, torch::kFloat32));
  std::vector<int64_t> tokens{1};
  for (int i = 0; i < 200; ++i) tokens.push_back(3 + (i * 37) % 500);
  // H2O and SnapKV evict after every step with statistics: the kernel gives the output, a chunked
  // pass the statistics.
  for (const std::string name : {"full", "streaming_llm", "h2o", "snapkv"}) {
    std::vector<torch::Tensor> logits;
    for (AttentionPath path : {AttentionPath::kAuto, AttentionPath::kSplitK}) {
      auto policy = policies::make_policy(name);
      SessionOptions options;
      options.attention = path;
      if (name != "full") {
        options.protocol = Protocol::kDecode;
        options.budget = policies::Budget::tokens(48);
      }
      InferenceSession session(gpu, policy.get(), options);
      torch::Tensor l = session.prefill(tokens);
      std::vector<torch::Tensor> steps;
      const int64_t calls_before = cuda::split_k_decode_calls();
      for (int s = 0; s < 16; ++s) {
        l = session.step(l.reshape({-1}).argmax().item<int64_t>());
        steps.push_back(l.cpu());
      }
      // Every layer of every step on kSplitK, none on kAuto.
      EXPECT_EQ(cuda::split_k_decode_calls() - calls_before,
                path == AttentionPath::kSplitK ? 16 * loaded_.config.n_layers : 0) << name;
      logits.push_back(torch::cat(steps));
    }
    EXPECT_LE((logits[0] - logits[1]).abs().max().item<double>(), 1e-3) << name;
    EXPECT_TRUE(torch::equal(logits[0].argmax(-1), logits[1].argmax(-1))) << name;
  }
}
#else
TEST(CudaSplitK, KernelMatchesFloat64) {
  GTEST_SKIP() << "this build has no split-K kernel (a CUDA libtorch and a CUDA compiler build it)";
}
#endif

}  // namespace
}  // namespace kvbench::models
