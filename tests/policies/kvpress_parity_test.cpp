// Parity with NVIDIA/kvpress's own presses (docs/policies-kvpress.md): every press and wrapper
// against outputs recorded by running kvpress's classes (scripts/policy_parity/kvpress.py,
// kvpress_expected_attention.py, kvpress_critical.py, kvpress_merging.py) on
// fixed tensors, the same positions kept per layer and KV head (tie groups at the selection
// boundary counted apart, tests/policies/parity_fixture.hpp). The presses that score a whole
// prompt once are in kvpress_prompt_parity_test.cpp.
#include "parity_fixture.hpp"

#include <filesystem>
#include <fstream>
#include <map>

#include "tensorio/safetensors.hpp"

namespace kvbench::policies {
namespace {

using parity::json;
using parity::policies_run;
using parity::recorded_rope;
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
  EXPECT_GE(parity::run_cases("kvpress_expected_attention.json", "expected_attention", run_expected_attention_case).cases, 8);
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
