// Parity with NVIDIA/kvpress's own presses (docs/policies-kvpress.md): every press and wrapper
// against outputs recorded by running kvpress's classes (scripts/policy_parity/kvpress.py,
// kvpress_expected_attention.py, kvpress_critical.py, kvpress_merging.py) on
// fixed tensors, the same positions kept per layer and KV head (tie groups at the selection
// boundary counted apart, tests/policies/parity_fixture.hpp).
#include "parity_fixture.hpp"

#include <filesystem>
#include <fstream>
#include <map>

#include "budget_probe.hpp"
#include "policies/context_rescoring.hpp"
#include "policies/keep_scored.hpp"
#include "policies/scorer_registry.hpp"
#include "tasks/kvpress_prompt.hpp"
#include "tensorio/safetensors.hpp"

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

// The RoPE of a recorded case: transformers' half-split layout at the case's theta, as the
// recorders' module.rotary_emb.
models::Rope recorded_rope(const json& c) {
  models::ModelConfig config;
  config.head_dim = c["head_dim"];
  config.n_heads = c["heads"];
  config.n_kv_heads = c["kv_heads"];
  config.rope_theta = c["rope_theta"];
  config.rope_style = models::RopeStyle::kHalfSplit;
  return models::Rope(config);
}

// ExpectedAttentionPress reads the queries before RoPE, which models::attend does not see: the
// case gives them with the keys before RoPE; both rotate here with the model's RoPE
// (transformers' half-split layout, as the recorded module.rotary_emb).
void run_expected_attention_case(const json& c, parity::ParityCount& count) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t H = c["heads"], KV = c["kv_heads"], d = c["head_dim"], T = c["prompt_len"];
  const models::Rope rope = recorded_rope(c);
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

// CompactorPress, alone and under AdaKVPress (scripts/policy_parity/kvpress_compactor.py): every
// score and the kept positions of kvpress's press after torch.manual_seed(seed), the sketch drawn here from a generator seeded
// with the job's seed. kvpress reads the keys before RoPE from the hidden states; kvbench recovers
// them by rotating the cached keys back (float rounding: the scores agree to ~1e-5, the selections
// outside the recorded near-ties exactly).
void run_compactor_case(const json& c, parity::ParityCount& count) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t H = c["heads"], KV = c["kv_heads"], d = c["head_dim"], T = c["prompt_len"];
  const models::Rope rope = recorded_rope(c);
  SequenceInfo info = parity::sequence_info(c, 1);
  info.seed = c["seed"];
  const torch::Tensor k = rope.apply_heads(parity::tensor_of(c["k"], {KV, T, d}), 0);
  const torch::Tensor v = parity::tensor_of(c["v"], {KV, T, d});
  AttentionStats stats;
  stats.queries = rope.apply_heads(parity::tensor_of(c["q"], {H, T, d}), 0);
  stats.queries_before_rope = parity::tensor_of(c["q"], {H, T, d});
  stats.rotate = [&rope](const torch::Tensor& x, int64_t first) { return rope.apply_heads(x, first); };
  stats.position_end = T;
  stats.n_queries = T;
  auto fresh_layer = [&](KVCache& cache) -> LayerCache& {
    append_model_heads(cache.layer(0), k, v, torch::arange(T, torch::kInt64));
    return cache.layer(0);
  };
  json press_params = c["params"];
  press_params.erase("alpha_safeguard");  // AdaKV's (kvpress:adakv_compactor cases)
  auto scorer = make_scorer("kvpress:compactor", resolved_params("kvpress:compactor", press_params));
  scorer->begin(info);
  KVCache scored(1, KV, d, torch::kFloat32, PositionMode::kOriginal);
  LayerCache& scored_layer = fresh_layer(scored);
  scorer->observe(0, scored_layer, stats, Phase::kPrefill);
  const torch::Tensor ours = scorer->scores(0, scored_layer, torch::Tensor());
  const torch::Tensor theirs = parity::tensor_of(c["scores"], {KV, T});
  EXPECT_LE((ours - theirs).abs().max().item<double>(), 1e-4);

  auto policy = make_policy(c["policy"], c["params"]);
  policy->begin(info);
  KVCache cache(1, KV, d, torch::kFloat32, policy->position_mode());
  LayerCache& layer = fresh_layer(cache);
  policy->observe(0, layer, stats, Phase::kPrefill);
  policy->compress(0, layer, Phase::kPrefill);
  parity::expect_kept(layer, c["kept"], c["ties"], count);
  ++count.cases;
}

TEST(KvpressParity, CompactorMatchesKvpress) {
  const json fixture = parity::load_fixture("kvpress_compactor.json");
  parity::ParityCount count;
  for (const json& c : fixture["cases"]) run_compactor_case(c, count);
  parity::report("compactor", fixture, count);
  EXPECT_EQ(count.cases, 8);  // 5 alone, 3 under AdaKV (ragged heads)
}

// kvpress's CompactorPress scores a prefill only: under the decode (or stream) protocol kvbench's
// refuses, with one clear error, the first time it must evict.
TEST(KvpressParity, CompactorRefusesToEvictWhileDecoding) {
  const json c = parity::load_fixture("kvpress_compactor.json")["cases"][0];
  const int64_t H = c["heads"], KV = c["kv_heads"], d = c["head_dim"], T = c["prompt_len"];
  auto policy = make_policy("kvpress:compactor", json::object());
  policy->begin(parity::sequence_info(c, 1));
  KVCache cache(1, KV, d, torch::kFloat32, PositionMode::kOriginal);
  LayerCache& layer = cache.layer(0);
  append_model_heads(layer, parity::tensor_of(c["k"], {KV, T, d}), parity::tensor_of(c["v"], {KV, T, d}),
                     torch::arange(T, torch::kInt64));
  const models::Rope rope = recorded_rope(c);
  AttentionStats step;  // one decoding query
  step.queries = torch::randn({H, 1, d});
  step.rotate = [&rope](const torch::Tensor& x, int64_t first) { return rope.apply_heads(x, first); };
  policy->observe(0, layer, step, Phase::kDecode);
  try {
    policy->compress(0, layer, Phase::kDecode);
    ADD_FAILURE() << "compactor evicted while decoding";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("run it under --protocol oneshot"), std::string::npos) << e.what();
  }
}

// Runs every case of a fixture whose cases name their own policy; returns the policies named.
std::set<std::string> policies_run(const std::string& fixture, const std::function<void(const json&)>& run_case) {
  const json cases = parity::load_fixture(fixture)["cases"];
  std::set<std::string> policies;
  for (const json& c : cases) {
    run_case(c);
    policies.insert(c["policy"]);
  }
  return policies;
}

// CAMPress (cam_knorm, cam_streaming_llm, cam_tova) driven as kvpress's forward hook was
// (scripts/policy_parity/kvpress_cam.py): a prefill, then decode steps whose current query's
// attention reaches the policy; at every compression the same positions kept and the same values
// left at them, the merges drawn from a generator seeded as kvpress's global one was.
void run_cam_case(const json& c, int64_t& compressions) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t L = c["layers"], H = c["heads"], KV = c["kv_heads"], d = c["head_dim"], T = c["prompt_len"];
  auto policy = make_policy(c["policy"], c["params"]);
  SequenceInfo info = parity::sequence_info(c, L);
  info.seed = c["seed"];
  policy->begin(info);
  KVCache cache(L, KV, d, torch::kFloat32, policy->position_mode());
  for (int64_t l = 0; l < L; ++l) {
    LayerCache& layer = cache.layer(l);
    append_model_heads(layer, parity::tensor_of(c["prompt"][l]["k"], {KV, T, d}), parity::tensor_of(c["prompt"][l]["v"], {KV, T, d}),
                       torch::arange(T, torch::kInt64));
    policy->observe(l, layer, AttentionStats{}, Phase::kPrefill);
    policy->compress(l, layer, Phase::kPrefill);
  }
  std::map<std::pair<int64_t, int64_t>, json> expected;  // (step, layer) -> compression
  for (const json& e : c["compressions"]) expected[{e["step"], e["layer"]}] = e;
  for (int64_t step = 1; step <= static_cast<int64_t>(c["steps"].size()); ++step) {
    for (int64_t l = 0; l < L; ++l) {
      const json& in = c["steps"][step - 1][l];
      LayerCache& layer = cache.layer(l);
      const int64_t before = layer.size() + 1;
      append_model_heads(layer, parity::tensor_of(in["k"], {KV, 1, d}), parity::tensor_of(in["v"], {KV, 1, d}),
                         torch::tensor({T + step - 1}, torch::kInt64));
      // The step's attention as the recorder's (common.causal_attention), over the cache as it is.
      const torch::Tensor keys = layer.keys().repeat_interleave(H / KV, 0);
      AttentionStats stats;
      stats.last_row = torch::softmax(torch::matmul(parity::tensor_of(in["q"], {H, 1, d}), keys.transpose(1, 2)) / std::sqrt(double(d)), -1)
                           .squeeze(1);
      stats.n_queries = 1;
      stats.position_end = T + step;
      policy->observe(l, layer, stats, Phase::kDecode);
      policy->compress(l, layer, Phase::kDecode);
      ASSERT_LE(layer.size(), policy->layer_budget(l));
      auto it = expected.find({step, l});
      if (it == expected.end()) {
        EXPECT_EQ(layer.size(), before) << "step " << step << " layer " << l << ": kvpress did not compress";
        continue;
      }
      SCOPED_TRACE("step " + std::to_string(step) + " layer " + std::to_string(l));
      for (int64_t h = 0; h < KV; ++h)
        EXPECT_EQ(parity::kept_positions(layer, h), it->second["kept"].get<std::set<int64_t>>()) << "head " << h;
      parity::expect_kept_rows(layer.values(), layer, it->second["kept_values"]);
      ++compressions;
    }
  }
}

TEST(KvpressParity, CamMergesWhatKvpressMerges) {
  int64_t compressions = 0, uncertain = 0;
  const std::set<std::string> policies = policies_run("kvpress_cam.json", [&](const json& c) {
    run_cam_case(c, compressions);
    uncertain += c["draws"][0].get<int64_t>();
  });
  EXPECT_EQ(policies, (std::set<std::string>{"kvpress:cam_knorm", "kvpress:cam_streaming_llm", "kvpress:cam_tova"}));
  EXPECT_EQ(compressions, 54);
  EXPECT_GT(uncertain, 100) << "the fixture should exercise merges drawn at random";
}

// kvpress's cam_adakv_snapkv fails in kvpress (AdaKVPress has no score()): kvbench names why.
TEST(KvpressParity, CamAroundAdaKvIsRefusedWithKvpressReason) {
  try {
    make_policy("kvpress:cam_adakv_snapkv");
    ADD_FAILURE() << "cam_adakv_snapkv was built";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("AdaKVPress does not have"), std::string::npos) << e.what();
  }
}

// After a rescoring press's scoring forwards: every layer compressed as the session does it, each
// keeping the recorded positions ("per_layer"[l]["kept"]), its widest head at the layer's budget.
void compress_every_layer_as_recorded(Policy& policy, KVCache& cache, const json& c) {
  for (int64_t l = 0; l < cache.n_layers(); ++l) {
    policy.compress(l, cache.layer(l), Phase::kPrefill);
    parity::ParityCount count;
    parity::expect_kept(cache.layer(l), c["per_layer"][l]["kept"], json(), count);
    EXPECT_EQ(cache.layer(l).max_head_length(), policy.layer_budget(l));
  }
}

// KVComposePress (kvcompose, kvcompose_unstructured; scripts/policy_parity/kvpress_kvcompose.py):
// each layer's context, then its second pass after it through models::attend (the statistics the
// press asks for while scoring), the pass rolled back as the session does, then every layer
// compressed: the same positions kept per layer and KV head.
void run_kvcompose_case(const json& c) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t L = c["layers"], H = c["heads"], KV = c["kv_heads"], d = c["head_dim"], n = c["prompt_len"];
  auto policy = make_policy(c["policy"], c["params"]);
  policy->begin(parity::sequence_info(c, L));
  ContextRescoring* rescoring = policy->rescoring();
  ASSERT_NE(rescoring, nullptr);
  ASSERT_EQ(rescoring->scoring_inputs(std::vector<int64_t>(n, 7), nullptr), std::vector<std::vector<int64_t>>{std::vector<int64_t>(n, 7)})
      << "KVCompose's second pass is the prompt itself";
  rescoring->begin_scoring_input(0);
  models::ModelConfig config;
  config.head_dim = d;
  config.n_heads = H;
  config.n_kv_heads = KV;
  const models::Rope rope(config);  // unused: the recorded keys are the cached (rotated) ones
  KVCache cache(L, KV, d, torch::kFloat32, policy->position_mode());
  for (int64_t l = 0; l < L; ++l) {
    const json& layer = c["per_layer"][l];
    LayerCache& lc = cache.layer(l);
    append_model_heads(lc, parity::tensor_of(layer["k"], {KV, n, d}), parity::tensor_of(layer["v"], {KV, n, d}),
                       torch::arange(n, torch::kInt64));
    append_model_heads(lc, parity::tensor_of(layer["k2"], {KV, n, d}), torch::ones({KV, n, d}), torch::arange(n, 2 * n, torch::kInt64));
    models::AttentionRequest request;
    request.stats = policy->wants();
    ASSERT_TRUE(request.stats.any()) << "the second pass asks for attention statistics";
    models::AttentionResult attn = models::attend(parity::tensor_of(layer["q2"], {H, n, d}), lc, rope, request);
    policy->observe(l, lc, attn.stats, Phase::kPrefillBlock);
    lc.truncate(n);
  }
  compress_every_layer_as_recorded(*policy, cache, c);
}

TEST(KvpressParity, KvcomposeKeepsWhatKvpressKeeps) {
  EXPECT_EQ(policies_run("kvpress_kvcompose.json", run_kvcompose_case),
            (std::set<std::string>{"kvpress:kvcompose", "kvpress:kvcompose_unstructured"}));
}

// KVzipPress (kvzip, kvzip_plus; scripts/policy_parity/kvpress_kvzip.py): the repeat inputs kvzip
// builds from the recorder's stand-in tokenizer (a string's UTF-8 bytes; "<s>[INST] " + message +
// " [/INST]" when it has a template) are kvpress's prepare()'s; each is fed after the context, layer
// by layer, with its recorded queries, keys and values (and W_o, the hidden states for KVzip+), and
// rolled back; every layer then keeps what kvpress leaves unmasked.
void run_kvzip_case(const json& c) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t L = c["layers"], H = c["heads"], KV = c["kv_heads"], d = c["head_dim"], n = c["prompt_len"];
  auto policy = make_policy(c["policy"], c["params"]);
  policy->begin(parity::sequence_info(c, L));
  ContextRescoring* rescoring = policy->rescoring();
  ASSERT_NE(rescoring, nullptr);
  PromptText text;
  text.encode = [](const std::string& s) { return std::vector<int64_t>(s.begin(), s.end()); };  // ASCII here
  const bool chat = c["chat_template"];
  text.chat = [chat](const std::string& message) -> std::optional<std::string> {
    if (!chat) return std::nullopt;
    return "<s>[INST] " + message + " [/INST]";
  };
  const std::vector<int64_t> prompt = c["ids"];
  EXPECT_THROW(rescoring->scoring_inputs(prompt, nullptr), std::invalid_argument) << "no tokenizer: one clear error";
  const std::vector<std::vector<int64_t>> inputs = rescoring->scoring_inputs(prompt, &text);
  ASSERT_EQ(inputs.size(), c["repeats"].size());
  KVCache cache(L, KV, d, torch::kFloat32, policy->position_mode());
  for (int64_t l = 0; l < L; ++l)
    append_model_heads(cache.layer(l), parity::tensor_of(c["per_layer"][l]["k"], {KV, n, d}),
                       parity::tensor_of(c["per_layer"][l]["v"], {KV, n, d}), torch::arange(n, torch::kInt64));
  const torch::Tensor wo = c.contains("wo") ? parity::tensor_of(c["wo"], {H * d, H * d}) : torch::Tensor();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const json& repeat = c["repeats"][i];
    EXPECT_EQ(inputs[i], repeat["ids"].get<std::vector<int64_t>>()) << "repeat input " << i;
    const int64_t T = static_cast<int64_t>(repeat["ids"].size());
    rescoring->begin_scoring_input(i);
    for (int64_t l = 0; l < L; ++l) {
      const json& in = repeat["layers"][l];
      LayerCache& layer = cache.layer(l);
      append_model_heads(layer, parity::tensor_of(in["k"], {KV, T, d}), parity::tensor_of(in["v"], {KV, T, d}), torch::arange(n, n + T));
      AttentionStats stats;
      const StatsRequest want = policy->wants();
      ASSERT_TRUE(want.queries) << "the repeat's queries";
      stats.queries = parity::tensor_of(in["q"], {H, T, d});
      stats.n_queries = T;
      if (want.hidden_states) stats.hidden_states = stats.queries.transpose(0, 1).reshape({T, H * d});  // q_proj is the identity
      if (want.output_projection) stats.output_projection = wo;
      policy->observe(l, layer, stats, Phase::kPrefillBlock);
      layer.truncate(n);
    }
  }
  compress_every_layer_as_recorded(*policy, cache, c);
}

TEST(KvpressParity, KvzipKeepsWhatKvpressLeavesUnmasked) {
  EXPECT_EQ(policies_run("kvpress_kvzip.json", run_kvzip_case), (std::set<std::string>{"kvpress:kvzip", "kvpress:kvzip_plus"}));
}

// FinchPress (finch; scripts/policy_parity/kvpress_finch.py): the window's attention rows kvpress
// read, the prompt's keys in the cache (before RoPE under rerotate_keys, which rotates them by slot
// order at read time; rotated otherwise); each KV head keeps kvpress's positions and, re-rotated,
// attention then sees kvpress's re-rotated keys.
void run_finch_case(const json& c, parity::ParityCount& count) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t H = c["heads"], KV = c["kv_heads"], d = c["head_dim"], T = c["prompt_len"], w = c["window"];
  const models::Rope rope = recorded_rope(c);
  auto policy = make_policy("kvpress:finch", c["params"]);
  SequenceInfo info = parity::sequence_info(c, 1);
  info.query_tokens = w;
  policy->begin(info);
  ASSERT_EQ(policy->wants().window, w);
  const bool rerotate = c["params"].value("rerotate_keys", true);
  ASSERT_EQ(policy->position_mode(), rerotate ? PositionMode::kCacheSlot : PositionMode::kOriginal);
  const torch::Tensor k = parity::tensor_of(c["k"], {KV, T, d});
  KVCache cache(1, KV, d, torch::kFloat32, policy->position_mode());
  LayerCache& layer = cache.layer(0);
  append_model_heads(layer, rerotate ? k : rope.apply_heads(k, 0), torch::zeros_like(k), torch::arange(T, torch::kInt64));
  AttentionStats stats;
  stats.window_rows = parity::tensor_of(c["rows"], {H, w, T});
  stats.n_queries = T;
  policy->observe(0, layer, stats, Phase::kPrefill);
  policy->compress(0, layer, Phase::kPrefill);
  parity::expect_kept(layer, c["kept"], c["ties"], count);
  if (c.contains("keys_out")) {
    const torch::Tensor theirs = parity::tensor_of(c["keys_out"], {KV, layer.size(), d});
    EXPECT_LE((rope.apply_heads(layer.keys(), 0) - theirs).abs().max().item<double>(), 1e-4) << "re-rotated keys";
  }
  ++count.cases;
}

TEST(KvpressParity, FinchKeepsAndReRotatesWhatKvpressDoes) {
  const json fixture = parity::load_fixture("kvpress_finch.json");
  parity::ParityCount count;
  for (const json& c : fixture["cases"]) run_finch_case(c, count);
  parity::report("finch", fixture, count);
  EXPECT_GE(count.cases, 9);
  EXPECT_LE(count.tied, 2) << "only the case whose last chunk is the question alone ties";
}

// FinchPress needs the question (a query-aware prompt, or window_size) and compresses the prompt
// once: without either it refuses at its start, under the decode protocol the first time it must
// evict; with the question, every head keeps it, and the answer starts at the compressed length.
TEST(KvpressSession, FinchKeepsTheQuestionAndAnswersAfterTheKeptTokens) {
  const models::Transformer& model = testing::probe_model();
  std::vector<int64_t> prompt{1};
  for (int64_t i = 1; i < 60; ++i) prompt.push_back(3 + (i * 37) % 500);
  models::SessionOptions options;
  options.budget = Budget::compression_ratio(0.5);
  auto policy = make_policy("kvpress:finch");
  models::InferenceSession no_question(model, policy.get(), options);
  try {
    no_question.prefill(prompt);
    ADD_FAILURE() << "a prompt without a question must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("query_aware: true"), std::string::npos) << e.what();
  }
  models::SessionOptions decode = options;
  decode.protocol = models::Protocol::kDecode;
  models::InferenceSession decoding(model, policy.get(), decode);
  decoding.prefill(prompt, false, 8);
  EXPECT_THROW(decoding.step(5), std::invalid_argument) << "prefill only";

  models::InferenceSession session(model, policy.get(), options);
  const int64_t q = 8, kept = 30;
  session.prefill(prompt, false, q);
  for (int64_t l = 0; l < model.config().n_layers; ++l) {
    const LayerCache& layer = session.cache().layer(l);
    ASSERT_EQ(layer.size(), kept);
    for (int64_t h = 0; h < layer.kv_heads(); ++h) {
      const std::set<int64_t> positions = parity::kept_positions(layer, h);
      for (int64_t p = 60 - q; p < 60; ++p) EXPECT_TRUE(positions.count(p)) << "layer " << l << " head " << h << " drops question token " << p;
    }
  }
  // Re-rotated, the kept keys sit at 0..29 and the next token at 30: its logits differ from the
  // same cache left at the original positions (rerotate_keys false), which answers at 60.
  auto original = make_policy("kvpress:finch", {{"rerotate_keys", false}});
  models::InferenceSession unrotated(model, original.get(), options);
  unrotated.prefill(prompt, false, q);
  for (int64_t h = 0; h < model.config().n_kv_heads; ++h)
    EXPECT_EQ(parity::kept_positions(unrotated.cache().layer(0), h), parity::kept_positions(session.cache().layer(0), h));
  EXPECT_FALSE(torch::allclose(session.step(5), unrotated.step(5), 1e-4, 1e-4));
}

// In a session (stories260K, oneshot): the prompt's prefill is not compressed (its logits are the
// full cache's), its second pass runs after it (the cache peaks at twice the prompt) and is rolled
// back, and the layers keep int(L·n·(1 − r)) tokens between them, layer 0 the most.
TEST(KvpressSession, KvcomposeRescoresThePromptAfterItsPrefill) {
  const models::Transformer& model = testing::probe_model();
  std::vector<int64_t> prompt{1};
  for (int64_t i = 1; i < 60; ++i) prompt.push_back(3 + (i * 37) % 500);
  models::SessionOptions options;
  options.budget = Budget::compression_ratio(0.5);
  auto policy = make_policy("kvpress:kvcompose");
  models::InferenceSession session(model, policy.get(), options), full(model, nullptr, models::SessionOptions{});
  const torch::Tensor logits = session.prefill(prompt);
  EXPECT_TRUE(torch::equal(logits, full.prefill(prompt)));
  EXPECT_EQ(session.max_cache_len(), 2 * 60);
  EXPECT_EQ(session.next_position(), 60);
  int64_t kept = 0;
  const int64_t L = model.config().n_layers;
  for (int64_t l = 0; l < L; ++l) {
    const LayerCache& layer = session.cache().layer(l);
    EXPECT_TRUE(layer.all_valid()) << "structured: one count for every head of a layer";
    EXPECT_LE(layer.size(), session.cache().layer(0).size()) << "layer " << l;
    kept += layer.size();
  }
  EXPECT_EQ(kept, static_cast<int64_t>(L * 60 * 0.5));
  session.step(5);  // the question after it: nothing evicted under oneshot
}

// KVzip in a session (stories260K: a sentencepiece tokenizer without a chat template): the prompt's
// prefill is not compressed, its one repeat input (kvpress's instruction, "\n", the prompt) runs after
// it and is rolled back, and the layers keep L·Hkv·n − int(L·Hkv·n·r) (head, token) pairs between them.
TEST(KvpressSession, KvzipRepeatsThePromptAfterItsPrefill) {
  const models::Transformer& model = testing::probe_model();
  const models::Tokenizer tokenizer(models::load_model("stories260K").tokenizer_path);
  const std::vector<int> encoded = tokenizer.encode("Once upon a time, there was a little dog named Max. He liked to run in the park.", true);
  const std::vector<int64_t> prompt(encoded.begin(), encoded.end());
  const int64_t n = static_cast<int64_t>(prompt.size());
  models::SessionOptions options;
  options.budget = Budget::compression_ratio(0.5);
  auto policy = make_policy("kvpress:kvzip");
  models::InferenceSession without_text(model, policy.get(), options);
  EXPECT_THROW(without_text.prefill(prompt), std::invalid_argument) << "no tokenizer given: one clear error";
  options.text = tasks::model_prompt_text(tokenizer);
  std::vector<int64_t> repeat = options.text->encode("\n\nRepeat the previous context exactly.");
  for (int64_t id : options.text->encode("\n")) repeat.push_back(id);
  repeat.insert(repeat.end(), prompt.begin(), prompt.end());
  EXPECT_EQ(policy->rescoring()->scoring_inputs(prompt, options.text.get()), std::vector<std::vector<int64_t>>{repeat});
  models::InferenceSession session(model, policy.get(), options), full(model, nullptr, models::SessionOptions{});
  EXPECT_TRUE(torch::equal(session.prefill(prompt), full.prefill(prompt)));
  EXPECT_EQ(session.max_cache_len(), n + static_cast<int64_t>(repeat.size()));
  EXPECT_EQ(session.next_position(), n);
  const int64_t L = model.config().n_layers, KV = model.config().n_kv_heads;
  int64_t kept = 0;
  for (int64_t l = 0; l < L; ++l) kept += valid_counts(session.cache().layer(l)).sum().item<int64_t>();
  EXPECT_EQ(kept, L * KV * n - static_cast<int64_t>(L * KV * n * 0.5));
}

// ThinKPress alone and after SnapKVPress (snap_think): the kept positions and the keys left at
// them, whose pruned channels are zero (scripts/policy_parity/kvpress_think.py). The queries reach
// the policy before RoPE with the model's rotation, and rotated through attention (SnapKV's window).
void run_think_case(const json& c) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t H = c["heads"], KV = c["kv_heads"], d = c["head_dim"], T = c["prompt_len"];
  const models::Rope rope = recorded_rope(c);
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
  EXPECT_EQ(policies_run("kvpress_think.json", run_think_case), (std::set<std::string>{"kvpress:think", "kvpress:snap_think"}));
}

// QFilterPress with the filters written as the published artefact (model.safetensors, tensor
// q_filters) and read back by kvpress:qfilter from the repository's directory.
TEST(KvpressParity, QFilterKeepsWhatKvpressKeepsWithTheFiltersReadFromTheArtefact) {
  const json fixture = parity::load_fixture("kvpress_qfilter.json");
  parity::ParityCount count;
  for (const json& c : fixture["cases"]) {
    const int64_t L = c["layers"], KV = c["kv_heads"], d = c["head_dim"];
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kvbench_" + c["name"].get<std::string>());
    std::filesystem::create_directories(dir);
    models::write_safetensors((dir / "model.safetensors").string(), {{"q_filters", parity::tensor_of(c["q_filters"], {L, KV, d})}});
    json with_path = c;
    with_path["params"]["q_filters"] = dir.string();
    parity::run_case("kvpress:qfilter", with_path, count);
    std::filesystem::remove_all(dir);
  }
  parity::report("kvpress:qfilter", fixture, count);
  EXPECT_GE(count.cases, 5);
}

// A missing or foreign artefact is one error naming the file and what was expected.
TEST(KvpressParity, QFilterNamesTheArtefactItNeeds) {
  auto error_of = [](const json& params, const SequenceInfo* info) -> std::string {
    try {
      auto policy = make_policy("kvpress:qfilter", params);
      if (info) policy->begin(*info);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(json::object(), nullptr).find("nthngdy/<model name>_qfilt"), std::string::npos);
  EXPECT_NE(error_of({{"q_filters", "/nonexistent/qfilt"}}, nullptr).find("/nonexistent/qfilt does not exist"), std::string::npos);
  const std::string file = (std::filesystem::temp_directory_path() / "kvbench_qfilt_wrong.safetensors").string();
  models::write_safetensors(file, {{"filters", torch::zeros({2, 2, 8})}});
  EXPECT_NE(error_of({{"q_filters", file}}, nullptr).find("no tensor 'q_filters'"), std::string::npos);
  models::write_safetensors(file, {{"q_filters", torch::zeros({2, 2, 8})}});
  SequenceInfo info;
  info.n_layers = 5;
  info.n_kv_heads = 4;
  info.head_dim = 8;
  EXPECT_NE(error_of({{"q_filters", file}}, &info).find("q_filters is [2, 2, 8], the model needs [5, 4, 8]"), std::string::npos);
  std::filesystem::remove(file);
}

// KVzapPress (kvzap_mlp_head) and DMSPress around it (kvzap_linear, kvzap_mlp): the recorded KVzap
// model written as the published artefact (config.json, model.safetensors) and read back; the
// forwards' hidden states fed as the runtime feeds them; the kept positions after the last forward.
TEST(KvpressParity, KvzapAndDmsKeepWhatKvpressKeeps) {
  const json fixture = parity::load_fixture("kvpress_kvzap.json");
  std::set<std::string> policies;
  parity::ParityCount count;
  for (const json& c : fixture["cases"]) {
    SCOPED_TRACE("case " + c["name"].get<std::string>());
    const int64_t L = c["layers"], KV = c["kv_heads"], d = c["head_dim"], dim = c["hidden_size"];
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kvbench_" + c["name"].get<std::string>());
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << c["kvzap_config"].dump();
    std::vector<std::pair<std::string, torch::Tensor>> tensors;
    for (const auto& [name, t] : c["kvzap_tensors"].items())
      tensors.push_back({name, parity::tensor_of(t["data"], t["shape"].get<std::vector<int64_t>>())});
    models::write_safetensors((dir / "model.safetensors").string(), tensors);
    json params = c["params"];
    params["kvzap_model"] = dir.string();
    auto policy = make_policy(c["policy"], params);
    policies.insert(c["policy"]);
    SequenceInfo info = parity::sequence_info(c, L);
    if (!c.contains("compression_ratio")) info.budget = kUnlimitedTokens;
    policy->begin(info);
    KVCache cache(L, KV, d, torch::kFloat32, policy->position_mode());
    int64_t position = 0;
    for (size_t f = 0; f < c["forwards"].size(); ++f) {
      const int64_t n = static_cast<int64_t>(c["forwards"][f].size()) / dim;
      const torch::Tensor h = parity::tensor_of(c["forwards"][f], {n, dim});
      for (int64_t l = 0; l < L; ++l) {
        LayerCache& layer = cache.layer(l);
        append_model_heads(layer, torch::zeros({KV, n, d}), torch::zeros({KV, n, d}), torch::arange(position, position + n));
        AttentionStats stats;
        stats.hidden_states = h;
        stats.n_queries = n;
        stats.position_end = position + n;
        const Phase phase = f == 0 ? Phase::kPrefill : Phase::kDecode;
        policy->observe(l, layer, stats, phase);
        policy->compress(l, layer, phase);
      }
      position += n;
    }
    for (int64_t l = 0; l < L; ++l) {
      const json& want = c["layer_results"][l];
      parity::expect_kept(cache.layer(l), want["kept"], want.contains("ties") ? want["ties"] : json(), count);
    }
    std::filesystem::remove_all(dir);
  }
  EXPECT_EQ(policies, (std::set<std::string>{"kvpress:kvzap_mlp_head", "kvpress:kvzap_linear", "kvpress:kvzap_mlp"}));
}

// DuoAttentionPress on the published pattern of Meta-Llama-3.1-8B-Instruct (tests/fixtures/
// duo_attention): the same streaming heads as kvpress for each head_compression_ratio (outside
// numpy's unspecified order among equal scores at the boundary), and after the prefill the same
// tokens gone from each streaming head: [sink_size, n − recent_size).
TEST(KvpressParity, DuoAttentionStreamsTheHeadsKvpressStreams) {
  const json fixture = parity::load_fixture("kvpress_duo_attention.json");
  const std::string pattern = std::string(KVBENCH_TESTS_DIR) + "/fixtures/duo_attention";
  int tied = 0;
  for (const json& c : fixture["cases"]) {
    const double ratio = c["head_compression_ratio"];
    SCOPED_TRACE("head_compression_ratio " + std::to_string(ratio));
    auto policy = make_policy("kvpress:duo_attention", {{"attn_pattern", pattern}, {"head_compression_ratio", ratio}});
    SequenceInfo info;
    info.n_layers = 32;
    info.n_heads = 32;
    info.n_kv_heads = 8;
    info.head_dim = 4;
    info.budget = kUnlimitedTokens;
    policy->begin(info);
    // Streaming heads as kvbench picks them: the heads that lose tokens on a long prompt.
    std::set<int64_t> ours, theirs = c["streaming"].get<std::set<int64_t>>(), ties = c["boundary_ties"].get<std::set<int64_t>>();
    const int64_t n = 1000;
    for (int64_t l = 0; l < 32; ++l) {
      LayerCache cache(8, 4, torch::kFloat32);
      cache.append(torch::zeros({8, n, 4}), torch::zeros({8, n, 4}), torch::arange(n, torch::kInt64));
      policy->compress(l, cache, Phase::kPrefill);
      for (int64_t h = 0; h < 8; ++h)
        if (parity::kept_positions(cache, h).size() < static_cast<size_t>(n)) ours.insert(l * 8 + h);
    }
    EXPECT_EQ(ours.size(), theirs.size());
    auto outside = [&](const std::set<int64_t>& x) {
      std::set<int64_t> o;
      for (int64_t i : x)
        if (!ties.count(i)) o.insert(i);
      return o;
    };
    EXPECT_EQ(outside(ours), outside(theirs));
    if (!ties.empty()) ++tied;
    // The masked positions of the recorded layers, on heads both pick.
    for (const json& layer : c["layers"]) {
      const int64_t l = layer["layer"], k_len = layer["k_len"];
      LayerCache cache(8, 4, torch::kFloat32);
      cache.append(torch::zeros({8, k_len, 4}), torch::zeros({8, k_len, 4}), torch::arange(k_len, torch::kInt64));
      policy->compress(l, cache, Phase::kPrefill);
      for (int64_t h = 0; h < 8; ++h) {
        if (ties.count(l * 8 + h)) continue;
        std::set<int64_t> kept = parity::kept_positions(cache, h), want;
        const std::set<int64_t> masked = layer["masked"][h].get<std::set<int64_t>>();
        for (int64_t p = 0; p < k_len; ++p)
          if (!masked.count(p)) want.insert(p);
        EXPECT_EQ(kept, want) << "layer " << l << " head " << h << " k_len " << k_len;
      }
    }
  }
  EXPECT_LE(tied, 2) << "the comparison should mostly be free of ties";
}

// A pattern file that does not parse is one error naming the file and line.
TEST(KvpressParity, DuoAttentionNamesTheLineOfABadPattern) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "kvbench_duo_bad";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"sink_size": 4, "recent_size": 8})";
  std::ofstream(dir / "full_attention_heads.tsv") << "0.5\t0.25\n0.5\tx\n";
  try {
    make_policy("kvpress:duo_attention", {{"attn_pattern", dir.string()}});
    ADD_FAILURE() << "a bad pattern was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("full_attention_heads.tsv: line 2, column 2: 'x' is not a number"), std::string::npos)
        << e.what();
  }
  std::ofstream(dir / "config.json") << R"({"sink_size": 4})";
  try {
    make_policy("kvpress:duo_attention", {{"attn_pattern", dir.string()}});
    ADD_FAILURE() << "a config without recent_size was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("config.json: field 'recent_size'"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

// LUKVPress around KnormPress with a budget curve of the published form (.npy [99, layers,
// kv_heads], written by numpy's np.save): each head's kept count from the curve's row for the
// ratio, its tokens by the press's scores with the sinks and the window protected.
TEST(KvpressParity, LukvKeepsWhatKvpressKeepsWithItsBudgetCurve) {
  const json fixture = parity::load_fixture("kvpress_lukv.json");
  parity::ParityCount count;
  for (const json& c : fixture["cases"]) {
    json with_curve = c;
    with_curve["params"]["budget_curve"] = (parity::kFixtures / fixture["reference"]["curve"].get<std::string>()).string();
    parity::run_case("kvpress:lukv", with_curve, count);
  }
  parity::report("kvpress:lukv", fixture, count);
  EXPECT_GE(count.cases, 5);
  // Without a curve: one error naming what to download.
  try {
    make_policy("kvpress:lukv");
    ADD_FAILURE() << "kvpress:lukv without a curve was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("baidu-baige/LU-KV"), std::string::npos) << e.what();
  }
}

// A KVzap directory that is missing, incomplete or of the other surrogate is one error naming the
// file and the field.
TEST(KvpressParity, KvzapNamesWhatIsWrongWithItsArtefact) {
  auto error_of = [](const json& params) -> std::string {
    try {
      make_policy("kvpress:kvzap_mlp_head", params);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(json::object()).find("nvidia/KVzap-mlp-<model name>"), std::string::npos) << error_of(json::object());
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "kvbench_kvzap_bad";
  std::filesystem::create_directories(dir);
  const json with_dir = {{"kvzap_model", dir.string()}};
  EXPECT_NE(error_of(with_dir).find("config.json does not exist"), std::string::npos) << error_of(with_dir);
  models::write_safetensors((dir / "model.safetensors").string(), {{"layers.0.weight", torch::zeros({2, 4})}});
  std::ofstream(dir / "config.json") << R"({"input_dim": 4, "output_dim": 2})";
  EXPECT_NE(error_of(with_dir).find("config.json: field 'n_modules' must be a positive integer"), std::string::npos) << error_of(with_dir);
  std::ofstream(dir / "config.json") << R"({"input_dim": 4, "output_dim": 2, "n_modules": 1, "hidden_dim": null})";
  EXPECT_NE(error_of(with_dir).find("a KVzap-linear model"), std::string::npos) << error_of(with_dir);
  const json linear = {{"kvzap_model", dir.string()}, {"kvzap_type", "linear"}};
  EXPECT_NE(error_of(linear).find("no tensor 'layers.0.bias'"), std::string::npos) << error_of(linear);
  models::write_safetensors((dir / "model.safetensors").string(),
                            {{"layers.0.weight", torch::zeros({2, 5})}, {"layers.0.bias", torch::zeros({2})}});
  EXPECT_NE(error_of(linear).find("tensor 'layers.0.weight' has the wrong shape"), std::string::npos) << error_of(linear);
  models::write_safetensors((dir / "model.safetensors").string(),
                            {{"layers.0.weight", torch::zeros({2, 4})}, {"layers.0.bias", torch::zeros({2})}});
  EXPECT_EQ(error_of(linear), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kvbench::policies
