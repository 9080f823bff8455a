// Decode steps on the meta device, the CPU stand-in for Cuda.DecodeStepsNeverSynchronise (which
// only a GPU machine runs): meta tensors have shapes and no data, so a policy that reads a value
// back (.item(), a copy to the host, nonzero()) or copies from the host with a blocking copy fails,
// and one that decides with tensor ops on the device runs through.
#include <gtest/gtest.h>

#include <string>

#include "models/generation.hpp"
#include "models/meta_kernels.hpp"
#include "models/model_loader.hpp"
#include "policies/registry.hpp"
#include "every_policy.hpp"

namespace kvbench::models {
namespace {

using kvbench::testing::BlockingCopiesFail;

class MetaDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    LoadedModel loaded = load_model("stories260K");
    model_ = new Transformer(loaded.config, to_device(loaded.weights, torch::kMeta, torch::kFloat32));
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }

  // A prompt under a 16-token budget (24 tokens: compressed at prefill; 12: not), then 12 decode
  // steps that each evict; "" when it ran through, else where and why it failed.
  static std::string decode(const std::string& policy_name, Protocol protocol,
                            const nlohmann::json& params = nlohmann::json::object(), int prompt = 24) {
    nlohmann::json all = kvbench::testing::runnable_params(policy_name, model_->config());
    all.update(params);
    auto policy = policies::make_policy(policy_name, all);
    SessionOptions options;
    options.protocol = protocol;
    options.block = 4;
    options.budget = policy_name == "full" ? policies::Budget::unlimited() : policies::Budget::tokens(16);
    std::vector<int64_t> tokens{1};
    for (int i = 1; i < prompt; ++i) tokens.push_back(3 + (i * 37) % 500);
    const char* where = "prefill";
    try {
      BlockingCopiesFail fail;
      InferenceSession session(*model_, policy.get(), options);
      session.prefill(tokens);
      where = "decode step";
      for (int s = 0; s < 12; ++s) session.step(3 + (s * 11) % 500);
      return "";
    } catch (const std::exception& e) {
      const std::string what = e.what();
      return std::string(where) + ": " + what.substr(0, what.find('\n'));
    }
  }

  // kvpress's DecodingPress and CAMPress compress every 512 steps by default: every 4 here, so
  // that the 12 steps compress.
  static nlohmann::json compressing_in_the_steps(const std::string& policy_name) {
    if (policy_name.rfind("kvpress:decoding", 0) == 0 || policy_name.rfind("kvpress:cam", 0) == 0)
      return {{"compression_interval", 4}};
    return nlohmann::json::object();
  }

  static Transformer* model_;
};

Transformer* MetaDevice::model_ = nullptr;

TEST_F(MetaDevice, TheStandInFailsOnReadsAndBlockingCopies) {
  torch::Tensor x = torch::zeros({4, 8}, torch::TensorOptions().device(torch::kMeta));
  EXPECT_ANY_THROW(x.sum().item<float>());
  EXPECT_ANY_THROW(x.to(torch::kCPU));
  EXPECT_ANY_THROW(x.gt(0).nonzero());
  torch::Tensor host = torch::ones({4, 8});
  EXPECT_NO_THROW(x.copy_(host));  // outside a BlockingCopiesFail (as when the weights are loaded)
  BlockingCopiesFail fail;
  EXPECT_ANY_THROW(x.copy_(host));
  EXPECT_NO_THROW(x.copy_(host, /*non_blocking=*/true));
  EXPECT_NO_THROW(x.copy_(x.flip(1)));  // device to device
}

// Every policy's registration says whether an evicting decode step reads the device (PolicyInfo::
// reads_device, shown by `kvbench policies`); the claim holds both ways, under the decode and the
// stream protocols (a prompt that fits the budget: the decode steps evict).
TEST_F(MetaDevice, EveryPolicyReadsTheDeviceExactlyWhenItsRegistrationSaysSo) {
  for (const auto& info : policies::registered_policies()) {
    for (Protocol protocol : {Protocol::kDecode, Protocol::kStream}) {
      if (kvbench::testing::policy_refuses(info.name, protocol, true) || kvbench::testing::prefill_only(info.name)) continue;
      const std::string failure = decode(info.name, protocol, compressing_in_the_steps(info.name), /*prompt=*/12);
      if (info.reads_device.empty())
        EXPECT_EQ(failure, "") << info.name << " (" << to_string(protocol) << ") is registered as deciding on the device";
      else if (protocol == Protocol::kDecode)
        EXPECT_NE(failure, "") << info.name << " runs on the device now: clear its reads_device";
    }
  }
}

// They compress prompts on the device too: one-shot (decode protocol) and block by block (stream),
// but for BumbleBee's one-shot summary (Alg. 1's greedy runs on the host, once per prompt).
TEST_F(MetaDevice, PromptsAreCompressedOnTheDeviceToo) {
  for (const auto& info : policies::registered_policies()) {
    if (!info.reads_device.empty()) continue;
    for (Protocol protocol : {Protocol::kDecode, Protocol::kStream}) {
      if (kvbench::testing::policy_refuses(info.name, protocol, true) || kvbench::testing::prefill_only(info.name)) continue;
      if (info.name == "bumblebee" && protocol == Protocol::kDecode) {
        EXPECT_NE(decode(info.name, protocol), "") << "bumblebee's one-shot summary runs on the device now";
        continue;
      }
      EXPECT_EQ(decode(info.name, protocol), "") << info.name << " (" << to_string(protocol) << ")";
    }
  }
}

// Dynamic-NTK RoPE rescales its frequencies by the sequence length, which the runtime knows: a
// model with it (a 16-token trained context, so that the 24-token prompt and the steps outgrow it)
// decodes on the device as well, under a policy that rotates keys by their cache slot too.
TEST_F(MetaDevice, DynamicNtkRopeDecodesOnTheDevice) {
  LoadedModel loaded = load_model("stories260K");
  ModelConfig config = loaded.config;
  config.rope_scaling.type = RopeScalingType::kDynamicNtk;
  config.rope_scaling.factor = 2.0;
  config.max_seq_len = 16;
  Transformer dynamic(config, to_device(loaded.weights, torch::kMeta, torch::kFloat32));
  for (const char* name : {"full", "streaming_llm"}) {
    auto policy = policies::make_policy(name);
    SessionOptions options;
    options.protocol = Protocol::kDecode;
    options.budget = std::string(name) == "full" ? policies::Budget::unlimited() : policies::Budget::tokens(12);
    std::vector<int64_t> tokens{1};
    for (int i = 1; i < 24; ++i) tokens.push_back(3 + (i * 37) % 500);
    BlockingCopiesFail fail;
    InferenceSession session(dynamic, policy.get(), options);
    EXPECT_NO_THROW(session.prefill(tokens)) << name;
    for (int s = 0; s < 6; ++s) EXPECT_NO_THROW(session.step(3 + s)) << name << " step " << s;
  }
}

// The options that take other code paths keep the device-side policies on the device.
TEST_F(MetaDevice, TheirOptionsDecideOnTheDeviceToo) {
  const std::vector<std::pair<std::string, nlohmann::json>> variants = {
      {"random", {{"per_head", true}}},
      {"random", {{"recent_ratio", 0.0}}},
      {"h2o", {{"head_reduce", "max"}}},
      {"tova", {{"head_reduce", "sum"}}},
      {"scissorhands", {{"head_reduce", "max"}}},
      {"scissorhands", {{"head_reduce", "sum"}, {"history_window", 3}}},
      {"snapkv", {{"gqa", "reduce"}}},
      {"snapkv", {{"pooling", "avg"}, {"window", 4}}},
      {"snapkv", {{"pooling", "none"}}},
      {"pyramidkv", {{"gqa", "reduce"}}},
      {"roco", {{"scope", "none"}}},
      {"roco", {{"scope", "window"}}},
      {"roco", {{"scope", "easykv"}}},
      {"roco", {{"importance", "random"}}},
      {"roco", {{"importance", "recency"}}},
      {"roco", {{"importance", "aas"}}},
      {"roco", {{"importance", "aqas"}}},
      {"roco", {{"importance", "ltas"}}},
      {"roco", {{"shared_heads", true}, {"sinks", 2}}},
      {"roco", {{"evict_block", 3}}},
      {"buzz", {{"new_tokens", "chunked"}}},
      {"buzz", {{"local_max", false}}},
      {"buzz", {{"trigger", "reaches"}, {"positions", "original"}}},
      {"buzz", {{"logn", true}}},
      {"cascade", {{"token_selection", false}}},
      {"cascade", {{"head_reduce", "median"}}},
      {"cascade", {{"head_reduce", "max"}, {"cascade_function", "pow3"}}},
      {"cascade", {{"eager_fill", false}, {"sinks_on_top", false}}},
      {"bumblebee", {{"mode", "online"}, {"phi", "power"}}},
      {"kvec", {{"gqa", "reduce"}, {"window", 4}, {"wide_window", 8}}},
      {"kvec", {{"head_criterion", "entropy"}, {"std_over", "prefix"}, {"window", 4}, {"wide_window", 8}}},
      {"kvec", {{"force_literal_one", true}, {"layer_coverage", false}, {"window", 4}}},
      {"bumblebee", {{"mode", "online"}, {"lambda", 1.0}, {"local_ratio", 0.25}}},
      {"kvpress:snap_think", {{"key_channel_compression_ratio", 0.5}, {"window_size", 4}}},
  };
  for (const auto& [name, params] : variants)
    for (Protocol protocol : {Protocol::kDecode, Protocol::kStream})
      if (!kvbench::testing::policy_refuses(name, protocol, true) && !kvbench::testing::prefill_only(name))
        EXPECT_EQ(decode(name, protocol, params), "") << name << " " << params.dump() << " (" << to_string(protocol) << ")";
}

}  // namespace
}  // namespace kvbench::models
