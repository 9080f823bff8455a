// Compression while generating: a policy that evicts during decoding holds its budget through a
// 2,000-token sampled generation (a reasoning trace's shape), step by step, while Full's cache
// grows with the trace. stories260K's weights with a 4,096-token context (its RoPE extends).
#include <gtest/gtest.h>

#include <algorithm>

#include "models/generation.hpp"
#include "models/model_loader.hpp"
#include "models/transformer.hpp"
#include "policies/registry.hpp"

namespace kvbench::models {
namespace {

constexpr int64_t kNewTokens = 2000;
constexpr int64_t kBudget = 96;

GenerationResult generate_long(const Transformer& model, policies::Policy* policy, const policies::Budget& budget) {
  SessionOptions options;
  options.protocol = Protocol::kDecode;
  options.budget = budget;
  InferenceSession session(model, policy, options);
  std::vector<int64_t> prompt{1};
  for (int i = 1; i < 48; ++i) prompt.push_back(3 + (i * 37) % 500);
  GenerationOptions gen;
  gen.max_new_tokens = kNewTokens;
  gen.sampling.temperature = 0.6;  // R-KV's and DeepSeek-R1's sampling
  gen.sampling.top_p = 0.95;
  gen.seed = 1;
  return generate(session, prompt, gen);
}

TEST(LongGeneration, DecodeTimePoliciesHoldTheirBudgetThroughTwoThousandTokens) {
  LoadedModel loaded = load_model("stories260K");
  ModelConfig config = loaded.config;
  config.max_seq_len = 4096;
  const Transformer model(config, loaded.weights);

  const GenerationResult full = generate_long(model, nullptr, policies::Budget::unlimited());
  ASSERT_EQ(full.tokens.size(), static_cast<size_t>(kNewTokens));
  ASSERT_EQ(full.cache_lengths.size(), static_cast<size_t>(kNewTokens));  // after the prefill and each step but the last
  EXPECT_EQ(full.cache_lengths.back(), 48 + kNewTokens - 1);

  const std::pair<const char*, nlohmann::json> policies[] = {
      {"streaming_llm", {}}, {"h2o", {}}, {"tova", {}},
      {"kvpress:decoding_knorm", {{"compression_interval", 64}}},
      {"kvpress:decoding_adakv_snapkv", {{"compression_interval", 64}}},
      {"kvpress:prefill_decoding", {{"prefilling_press", "kvpress:snapkv"}, {"decoding_press", "kvpress:decoding_knorm"},
                                    {"decoding_params", {{"compression_interval", 64}}}}},
      {"rkv", {{"divide_length", 64}}}};  // R-KV: every 64 positions
  for (const auto& [name, params] : policies) {
    auto policy = policies::make_policy(name, params);
    const GenerationResult out = generate_long(model, policy.get(), policies::Budget::tokens(kBudget));
    ASSERT_EQ(out.tokens.size(), static_cast<size_t>(kNewTokens)) << name;
    ASSERT_EQ(out.cache_lengths.size(), full.cache_lengths.size()) << name;
    int64_t bound = 0;  // what the policy declares a layer may hold (DecodingPress, R-KV: budget + interval - 1)
    for (int64_t layer = 0; layer < config.n_layers; ++layer) bound = std::max(bound, policy->layer_budget(layer));
    // Ada-KV moves budget between the heads of a layer: one head may hold up to the layer's total.
    const bool ada = std::string(name).find("adakv") != std::string::npos;
    EXPECT_LE(bound, (ada ? kBudget * config.n_kv_heads : kBudget) + 64) << name;
    for (size_t step = 0; step < out.cache_lengths.size(); ++step)
      ASSERT_LE(out.cache_lengths[step], bound) << name << " after step " << step;
    EXPECT_GE(*std::max_element(out.cache_lengths.begin(), out.cache_lengths.end()), kBudget) << name << " used its budget";
  }
}

}  // namespace
}  // namespace kvbench::models
