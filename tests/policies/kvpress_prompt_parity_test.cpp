// Parity with NVIDIA/kvpress's presses that score a whole prompt once (docs/policies-kvpress.md):
// CompactorPress, and those the session drives through its rescoring path — KVComposePress and
// KVzipPress (more forwards after the prompt), FastKVzipPress (gates on the prefill's hidden
// states) — and FinchPress (the question of a query-aware prompt as its window): outputs recorded
// by running kvpress's classes (scripts/policy_parity/kvpress_{compactor,kvcompose,kvzip,fastkvzip,
// finch}.py), and each press's part in a session on stories260K.
#include "parity_fixture.hpp"

#include "budget_probe.hpp"
#include "policies/context_rescoring.hpp"
#include "policies/keep_scored.hpp"
#include "policies/scorer_registry.hpp"
#include "tasks/kvpress_prompt.hpp"

namespace kvbench::policies {
namespace {

using parity::compress_every_layer_as_recorded;
using parity::json;
using parity::policies_run;
using parity::recorded_rope;

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
  EXPECT_EQ(parity::run_cases("kvpress_compactor.json", "compactor", run_compactor_case).cases, 8);  // 5 alone, 3 under AdaKV (ragged heads)
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
  const parity::ParityCount count = parity::run_cases("kvpress_finch.json", "finch", run_finch_case);
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

// FastKVzipPress (fastkvzip; scripts/policy_parity/kvpress_fastkvzip.py): gate files written as
// FastKVzip's optim.py writes the published ones (torch.save, NumPy arrays beside the gates), read
// by kvbench's torch.save reader; each layer's prefill hidden states reach the press as the model
// hands them, then every layer keeps what kvpress's compress_post leaves unmasked (global budget,
// layerwise, sinks and windows).
void run_fastkvzip_case(const json& c) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t L = c["layers"], KV = c["kv_heads"], d = c["head_dim"], n = c["prompt_len"], D = c["hidden"];
  json params = c["params"];
  params["gates"] = (parity::kFixtures / c["gates"].get<std::string>()).string();
  auto policy = make_policy(c["policy"], params);
  policy->begin(parity::sequence_info(c, L));
  ASSERT_NE(policy->rescoring(), nullptr);
  EXPECT_TRUE(policy->rescoring()->scoring_inputs(std::vector<int64_t>(n, 7), nullptr).empty()) << "no extra forward";
  ASSERT_TRUE(policy->wants().hidden_states);
  KVCache cache(L, KV, d, torch::kFloat32, policy->position_mode());
  for (int64_t l = 0; l < L; ++l) {
    LayerCache& layer = cache.layer(l);
    append_model_heads(layer, torch::zeros({KV, n, d}), torch::zeros({KV, n, d}), torch::arange(n, torch::kInt64));
    AttentionStats stats;
    stats.hidden_states = parity::tensor_of(c["per_layer"][l]["h"], {n, D});
    stats.n_queries = n;
    policy->observe(l, layer, stats, Phase::kPrefill);
  }
  compress_every_layer_as_recorded(*policy, cache, c);
}

TEST(KvpressParity, FastKvzipKeepsWhatKvpressLeavesUnmasked) {
  EXPECT_EQ(policies_run("kvpress_fastkvzip.json", run_fastkvzip_case), std::set<std::string>{"kvpress:fastkvzip"});
  // Without its gates it names the file to download; with another model's, the shapes that differ.
  SequenceInfo info;
  info.n_layers = 2, info.n_heads = 8, info.n_kv_heads = 2, info.head_dim = 4, info.prompt_len = 10, info.budget = 5;
  auto refused = [&](const json& params) {
    try {
      make_policy("kvpress:fastkvzip", params)->begin(info);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(refused(json::object()).find("q4_dim16_sink16.pt from the Hugging Face repository Jang-Hyun/Fast-KVzip"), std::string::npos);
  info.n_kv_heads = 4;
  EXPECT_NE(refused({{"gates", (parity::kFixtures / "fastkvzip/gqa8x2_L2_n120_r0.5.pt").string()}}).find("the model has 2 × 4 × 2"),
            std::string::npos);
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

}  // namespace
}  // namespace kvbench::policies
