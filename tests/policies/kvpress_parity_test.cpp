// Parity with NVIDIA/kvpress's own presses (docs/policies-kvpress.md): every press and wrapper
// against outputs recorded by running kvpress's classes (scripts/policy_parity/kvpress.py,
// kvpress_expected_attention.py, kvpress_critical.py, kvpress_merging.py) on
// fixed tensors, the same positions kept per layer and KV head (tie groups at the selection
// boundary counted apart, tests/policies/parity_fixture.hpp).
#include "parity_fixture.hpp"

namespace kvbench::policies {
namespace {

using parity::json;
using parity::run_fixture;

// One fixture per registry key: MHA and GQA, ratios 0.25 to 0.75, prompts of 41 to 80 tokens and
// parameter variants (windows, kernels, sinks, lags, block and chunk lengths, alpha), the prompt
// compressed once as kvpress's pipeline does, then decode steps that only append.
class KvpressRegistryKey : public ::testing::TestWithParam<std::string> {};

TEST_P(KvpressRegistryKey, KeepsWhatKvpressKeeps) {
  const parity::ParityCount count = run_fixture("kvpress_" + GetParam() + ".json");
  EXPECT_GE(count.cases, 5);
  EXPECT_LE(2 * count.tied, count.selections) << "too many tie groups for the comparison to mean much";
}

INSTANTIATE_TEST_SUITE_P(Kvpress, KvpressRegistryKey,
                         ::testing::Values("knorm", "keydiff", "random", "streaming_llm", "tova", "snapkv",
                                           "observed_attention", "lagkv", "cur", "pyramidkv", "adakv_snapkv", "chunkkv",
                                           "critical_snapkv", "critical_adakv_snapkv", "block_keydiff", "merging_knorm",
                                           "merging_snapkv"));

// ExpectedAttentionPress reads the queries before RoPE, which models::attend does not see: the
// case gives them with the keys before RoPE; both rotate here with the model's RoPE
// (transformers' half-split layout, as the recorded module.rotary_emb).
void run_expected_attention_case(const json& c, parity::ParityCount& count) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t H = c["heads"], KV = c["kv_heads"], d = c["head_dim"], T = c["prompt_len"];
  models::ModelConfig config;
  config.head_dim = d;
  config.n_heads = H;
  config.n_kv_heads = KV;
  config.rope_theta = c["rope_theta"];
  config.rope_style = models::RopeStyle::kHalfSplit;
  const models::Rope rope(config);
  auto policy = make_policy(c["policy"], c["params"]);
  ASSERT_TRUE(c.contains("compression_ratio"));
  policy->begin(parity::sequence_info(c, 1));

  const torch::Tensor q = parity::tensor_of(c["q"], {H, T, d});
  const torch::Tensor k = rope.apply_heads(parity::tensor_of(c["k"], {KV, T, d}), 0);
  const torch::Tensor v = parity::tensor_of(c["v"], {KV, T, d});
  KVCache cache(1, KV, d, torch::kFloat32, policy->position_mode());
  LayerCache& layer = cache.layer(0);
  append_model_heads(layer, k, v, torch::arange(T, torch::kInt64));
  AttentionStats stats;
  stats.queries_before_rope = q;
  stats.rotate = [&rope](const torch::Tensor& x, int64_t first) { return rope.apply_heads(x, first); };
  stats.position_end = T;
  stats.n_queries = T;
  policy->observe(0, layer, stats, Phase::kPrefill);
  policy->compress(0, layer, Phase::kPrefill);
  parity::expect_kept(layer, c["kept"], c.value("ties", json()), count);
  ++count.cases;
}

TEST(KvpressParity, ExpectedAttentionMatchesKvpress) {
  const json fixture = parity::load_fixture("kvpress_expected_attention.json");
  parity::ParityCount count;
  for (const json& c : fixture["cases"]) run_expected_attention_case(c, count);
  parity::report("expected_attention", fixture, count);
  EXPECT_GE(count.cases, 8);
}

// ThinKPress alone and after SnapKVPress (snap_think): the kept positions and the keys left at
// them, whose pruned channels are zero (scripts/policy_parity/kvpress_think.py). The queries reach
// the policy before RoPE with the model's rotation, and rotated through attention (SnapKV's window).
void run_think_case(const json& c) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t H = c["heads"], KV = c["kv_heads"], d = c["head_dim"], T = c["prompt_len"];
  models::ModelConfig config;
  config.head_dim = d;
  config.n_heads = H;
  config.n_kv_heads = KV;
  config.rope_theta = c["rope_theta"];
  config.rope_style = models::RopeStyle::kHalfSplit;
  const models::Rope rope(config);
  auto policy = make_policy(c["policy"], c["params"]);
  SequenceInfo info = parity::sequence_info(c, 1);
  if (!c.contains("compression_ratio")) info.budget = kUnlimitedTokens;
  policy->begin(info);

  const torch::Tensor q = parity::tensor_of(c["q"], {H, T, d});
  const torch::Tensor k = rope.apply_heads(parity::tensor_of(c["k"], {KV, T, d}), 0);
  KVCache cache(1, KV, d, torch::kFloat32, policy->position_mode());
  LayerCache& layer = cache.layer(0);
  append_model_heads(layer, k, parity::tensor_of(c["v"], {KV, T, d}), torch::arange(T, torch::kInt64));
  models::AttentionRequest request;
  request.mode = policy->position_mode();
  request.stats = policy->wants();
  models::AttentionResult attn = models::attend(rope.apply_heads(q, 0), layer, rope, request);
  attn.stats.queries_before_rope = q;
  attn.stats.rotate = [&rope](const torch::Tensor& x, int64_t first) { return rope.apply_heads(x, first); };
  attn.stats.position_end = T;
  attn.stats.n_queries = T;
  policy->observe(0, layer, attn.stats, Phase::kPrefill);
  policy->compress(0, layer, Phase::kPrefill);
  parity::ParityCount count;
  parity::expect_kept(layer, c["kept"], json(), count);
  parity::expect_kept_rows(layer.keys(), layer, c["kept_keys"]);
}

TEST(KvpressParity, ThinkZeroesTheKeyChannelsKvpressZeroes) {
  const json fixture = parity::load_fixture("kvpress_think.json");
  std::set<std::string> policies;
  for (const json& c : fixture["cases"]) {
    run_think_case(c);
    policies.insert(c["policy"]);
  }
  EXPECT_EQ(policies, (std::set<std::string>{"kvpress:think", "kvpress:snap_think"}));
}

}  // namespace
}  // namespace kvbench::policies
