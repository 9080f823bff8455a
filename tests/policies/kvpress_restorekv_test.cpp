// kvpress:RestoreKV and kvpress:RestoreKV_plus against kvpress's RestoreKVPress, run through its own
// context manager on the tiny random Qwen3 checkpoint tests/fixtures/qwen3_reference with restore
// embeddings and PEFT LoRA adapters in the hub's formats (scripts/policy_parity/kvpress_restorekv.py):
// what every KV head keeps of the context, the keys and values the LoRA-adapted restore pass leaves
// in the cache, and the logits of a question fed after them. Also the adapter reader's refusals and
// the LoRA forward against the same model with the adapter merged into its weights.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "models/transformer.hpp"
#include "parity_fixture.hpp"
#include "qwen3_reference_checkpoint.hpp"
#include "policies/registry.hpp"
#include "tasks/kvpress_prompt.hpp"
#include "tensorio/peft_lora_adapter.hpp"
#include "tensorio/safetensors.hpp"
#include "tokenizers/model_error.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::policies {
namespace {

namespace fs = std::filesystem;
using parity::json;

const json& restore_fixture() {
  static const json f = parity::load_fixture("kvpress_restorekv.json");
  return f;
}


std::string artefacts(const json& c) { return (fs::path(KVBENCH_TESTS_DIR) / "fixtures" / c["artefacts"].get<std::string>()).string(); }

// Head h's cached rows at positions from..from+count−1, flattened as the recorder's [kv, N, d].
torch::Tensor rows_at(const torch::Tensor& rows, const LayerCache& lc, int64_t h, int64_t from, int64_t count) {
  const torch::Tensor positions = lc.positions()[parity::positions_row(lc, h)];
  std::vector<torch::Tensor> out;
  for (int64_t p = from; p < from + count; ++p) {
    const torch::Tensor slot = (positions == p).nonzero();
    EXPECT_EQ(slot.size(0), 1) << "position " << p << " of head " << h;
    if (slot.size(0) != 1) return torch::Tensor();
    out.push_back(rows[h][slot[0][0].item<int64_t>()]);
  }
  return torch::stack(out);
}

TEST(KvpressRestoreKv, EqualsKvpressOnTheQwen3Checkpoint) {
  const auto& c = kvbench::testing::qwen3_reference_checkpoint();
  const json& cases = restore_fixture()["cases"];
  ASSERT_EQ(cases.size(), 3u);
  std::set<std::string> policies;
  for (const json& cs : cases) {
    const std::string policy_name = cs["policy"];
    const double ratio = cs["compression_ratio"];
    SCOPED_TRACE(policy_name + " at ratio " + std::to_string(ratio));
    policies.insert(policy_name);
    auto policy = make_policy(policy_name, {{"restore_model", artefacts(cs)}, {"chunk_size", cs["chunk_size"]}});
    models::SessionOptions options;
    options.text = tasks::model_prompt_text(c.tokenizer);
    options.budget = Budget::compression_ratio(ratio);
    models::InferenceSession session(c.model, policy.get(), options);
    const std::vector<int64_t> context = cs["context_ids"], question = cs["question_ids"];
    const int64_t n = static_cast<int64_t>(context.size()), N = cs["restore_tokens"], KV = c.model.config().n_kv_heads;
    const int64_t d = c.model.config().head_dim;
    session.prefill(context);
    ASSERT_EQ(session.next_position(), n + N) << "the question follows the restore tokens";
    for (int64_t l = 0; l < c.model.config().n_layers; ++l) {
      const json& want = cs["per_layer"][l];
      LayerCache& lc = session.cache().layer(l);
      for (int64_t h = 0; h < KV; ++h) {
        std::set<int64_t> kept = want["kept"][h].get<std::set<int64_t>>();
        for (int64_t p = n; p < n + N; ++p) kept.insert(p);  // kvpress never masks the restore tokens
        EXPECT_EQ(parity::kept_positions(lc, h), kept) << "layer " << l << ", KV head " << h;
        const torch::Tensor keys = rows_at(lc.keys(), lc, h, n, N), values = rows_at(lc.values(), lc, h, n, N);
        const torch::Tensor want_keys = parity::tensor_of(want["restore_keys"], {KV, N, d})[h];
        const torch::Tensor want_values = parity::tensor_of(want["restore_values"], {KV, N, d})[h];
        EXPECT_TRUE(keys.defined() && torch::allclose(keys, want_keys, 0, 2e-5)) << "restore keys, layer " << l << ", head " << h;
        EXPECT_TRUE(values.defined() && torch::allclose(values, want_values, 0, 2e-5)) << "restore values, layer " << l << ", head " << h;
      }
    }
    torch::Tensor logits;
    for (int64_t id : question) logits = session.step(id);
    const torch::Tensor want_logits = parity::tensor_of(cs["question_logits"], {c.model.config().vocab_size});
    EXPECT_TRUE(torch::allclose(logits, want_logits, 0, 1e-4)) << "the question's logits differ by " << (logits - want_logits).abs().max();
  }
  EXPECT_EQ(policies, (std::set<std::string>{"kvpress:RestoreKV", "kvpress:RestoreKV_plus"}));
}

// kvpress runs no press at ratio 0 and so appends no restore tokens; neither does kvbench.
TEST(KvpressRestoreKv, AppendsNothingWhereNothingIsEvicted) {
  const auto& c = kvbench::testing::qwen3_reference_checkpoint();
  const json& cs = restore_fixture()["cases"][0];
  auto policy = make_policy("kvpress:RestoreKV", {{"restore_model", artefacts(cs)}});
  models::SessionOptions options;
  options.text = tasks::model_prompt_text(c.tokenizer);
  options.budget = Budget::compression_ratio(0.0);
  models::InferenceSession session(c.model, policy.get(), options), full(c.model, nullptr, models::SessionOptions{});
  const std::vector<int64_t> context = cs["context_ids"];
  EXPECT_TRUE(torch::equal(session.prefill(context), full.prefill(context)));
  EXPECT_EQ(session.next_position(), static_cast<int64_t>(context.size()));
  EXPECT_EQ(session.cache().layer(0).size(), static_cast<int64_t>(context.size()));
}

// A scratch folder of this process, removed at exit.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("kvbench_restorekv_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
};

// A copy of the fixture's RestoreKV folder with adapter_config.json's text replaced and the given
// adapter tensors (none: the fixture's).
fs::path adapter_copy(const Scratch& scratch, const std::string& name, const std::function<void(json&)>& edit_config,
                      const std::vector<std::pair<std::string, torch::Tensor>>& tensors = {}) {
  const fs::path from = artefacts(restore_fixture()["cases"][0]), to = scratch.dir / name;
  fs::create_directories(to);
  for (const char* f : {"restore_embeddings.safetensors", "adapter_model.safetensors"})
    fs::copy_file(from / f, to / f, fs::copy_options::overwrite_existing);
  std::ifstream in(from / "adapter_config.json");
  json config = json::parse(in);
  edit_config(config);
  std::ofstream(to / "adapter_config.json") << config.dump(2) << "\n";
  if (!tensors.empty()) models::write_safetensors((to / "adapter_model.safetensors").string(), tensors);
  return to;
}

std::string refusal(const fs::path& folder) {
  try {
    make_policy("kvpress:RestoreKV", {{"restore_model", folder.string()}});
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(PeftLoraAdapter, RefusesWhatItCannotReproduce) {
  Scratch scratch;
  const torch::Tensor a = torch::zeros({4, 32}), b = torch::zeros({64, 4});
  EXPECT_NE(refusal("").find("higokri/RestoreKV-<model name>"), std::string::npos);
  EXPECT_NE(refusal(scratch.dir / "absent").find("restore_embeddings.safetensors does not exist"), std::string::npos);
  const std::string unknown = refusal(adapter_copy(scratch, "unknown", [](json& c) { c["lora_alphas"] = 1; }));
  EXPECT_NE(unknown.find("adapter_config.json:"), std::string::npos) << unknown;  // the line
  EXPECT_NE(unknown.find("field 'lora_alphas': unknown field"), std::string::npos) << unknown;
  EXPECT_NE(refusal(adapter_copy(scratch, "dora", [](json& c) { c["use_dora"] = true; })).find("field 'use_dora'"), std::string::npos);
  EXPECT_NE(refusal(adapter_copy(scratch, "pattern", [](json& c) { c["rank_pattern"] = {{"q_proj", 2}}; })).find("field 'rank_pattern'"),
            std::string::npos);
  EXPECT_NE(refusal(adapter_copy(scratch, "type", [](json& c) { c["peft_type"] = "IA3"; })).find("must be \"LORA\""), std::string::npos);
  EXPECT_NE(refusal(adapter_copy(scratch, "rank", [](json& c) { c["r"] = 8; })).find("has rank 4, adapter_config.json's r is 8"),
            std::string::npos);
  const std::string stem = "base_model.model.model.layers.0.self_attn.q_proj.";
  EXPECT_NE(refusal(adapter_copy(scratch, "alone", [](json&) {}, {{stem + "lora_A.weight", a}})).find("has no lora_B"), std::string::npos);
  EXPECT_NE(refusal(adapter_copy(scratch, "embed", [](json&) {}, {{"base_model.model.model.embed_tokens.lora_embedding_A", a}}))
                .find("decoder layers' projections only"),
            std::string::npos);
  EXPECT_NE(refusal(adapter_copy(scratch, "block", [](json&) {}, {{"base_model.model.model.layers.0.mlp.q_proj.lora_A.weight", a},
                                                                 {"base_model.model.model.layers.0.mlp.q_proj.lora_B.weight", b}}))
                .find("'mlp.q_proj' is not a projection"),
            std::string::npos);
  // An adapter of another model: the transformer names the tensor whose shape does not fit.
  const fs::path other = adapter_copy(scratch, "other", [](json&) {}, {{stem + "lora_A.weight", torch::zeros({4, 48})}, {stem + "lora_B.weight", b}});
  const auto& c = kvbench::testing::qwen3_reference_checkpoint();
  auto policy = make_policy("kvpress:RestoreKV", {{"restore_model", other.string()}});
  models::SessionOptions options;
  options.text = tasks::model_prompt_text(c.tokenizer);
  options.budget = Budget::compression_ratio(0.5);
  models::InferenceSession session(c.model, policy.get(), options);
  const std::vector<int64_t> context = restore_fixture()["cases"][0]["context_ids"];
  try {
    session.prefill(context);
    ADD_FAILURE() << "an adapter of another shape ran";
  } catch (const models::ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor '" + stem + "lora_A.weight'"), std::string::npos) << e.what();
  }
}

// PEFT's LoRA Linear computes W x + B(A x)·scaling: the adapter enabled equals its merge W + s·B A
// into the weights (scaling alpha/r, alpha/√r with use_rslora), and an input row of embeddings is
// the token's row.
TEST(PeftLoraAdapter, AnEnabledAdapterEqualsItsMergeIntoTheWeights) {
  const auto& c = kvbench::testing::qwen3_reference_checkpoint();
  for (const json& cs : {restore_fixture()["cases"][0], restore_fixture()["cases"][2]}) {
    const models::LoraAdapter adapter = models::read_peft_lora_adapter(artefacts(cs));
    std::ifstream in(fs::path(artefacts(cs)) / "adapter_config.json");
    const json config = json::parse(in);
    const double r = config["r"], alpha = config["lora_alpha"];
    EXPECT_DOUBLE_EQ(adapter.scaling, config["use_rslora"].get<bool>() ? alpha / std::sqrt(r) : alpha / r);
    models::ModelWeights merged = models::to_device(c.loaded.weights, torch::kCPU, torch::kFloat32);
    int64_t adapted = 0;
    for (int64_t l = 0; l < c.model.config().n_layers; ++l) {
      models::LayerWeights& w = merged.layers[l];
      for (auto [target, weight] : std::vector<std::pair<models::LoraTarget, torch::Tensor*>>{
               {models::LoraTarget::kQ, &w.wq}, {models::LoraTarget::kK, &w.wk}, {models::LoraTarget::kV, &w.wv}, {models::LoraTarget::kO, &w.wo},
               {models::LoraTarget::kGate, &w.w_gate}, {models::LoraTarget::kUp, &w.w_up}, {models::LoraTarget::kDown, &w.w_down}}) {
        const models::LoraPair& p = adapter.pair(l, target);
        if (!p.defined()) continue;
        *weight = *weight + p.b.matmul(p.a) * adapter.scaling;
        ++adapted;
      }
    }
    EXPECT_GT(adapted, 0);
    const models::Transformer merged_model(c.loaded.config, merged);
    const torch::Tensor rows = torch::randn({6, c.model.config().dim}, torch::TensorOptions().dtype(torch::kFloat32)) * 2;
    KVCache with = c.model.make_cache(PositionMode::kOriginal), merge = c.model.make_cache(PositionMode::kOriginal);
    const torch::Tensor lora = c.model.forward_embeddings(rows, 3, with, {}, true, &adapter);
    const torch::Tensor want = merged_model.forward_embeddings(rows, 3, merge, {}, true, nullptr);
    EXPECT_TRUE(torch::allclose(lora, want, 1e-4, 1e-4)) << "differ by " << (lora - want).abs().max();
    KVCache plain = c.model.make_cache(PositionMode::kOriginal);
    EXPECT_FALSE(torch::allclose(lora, c.model.forward_embeddings(rows, 3, plain, {}, true, nullptr), 1e-3, 1e-3)) << "the adapter changes nothing";
  }
  const std::vector<int64_t> tokens = {5, 77, 300};
  KVCache a = c.model.make_cache(PositionMode::kOriginal), b = c.model.make_cache(PositionMode::kOriginal);
  const torch::Tensor rows = c.loaded.weights.embedding.index_select(0, torch::tensor(tokens)).to(torch::kFloat32);
  EXPECT_TRUE(torch::equal(c.model.forward_embeddings(rows, 0, a, {}, true, nullptr), c.model.forward(tokens, 0, b, {}, true)));
}

}  // namespace
}  // namespace kvbench::policies
