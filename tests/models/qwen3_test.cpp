// Qwen3: per-head RMSNorm of q and k (q_norm/k_norm, [head_dim]) before RoPE, no q/k/v bias,
// head_dim from config.json (16 here, not hidden_size / heads = 8). The reference is
// tests/fixtures/qwen3_reference, written by scripts/make_qwen3_reference.py with an independent
// float64 PyTorch forward of the Qwen3 equations (transformers is not installable here).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "harness/file_tree.hpp"
#include "models/inference_session.hpp"
#include "tokenizers/model_error.hpp"
#include "models/model_loader.hpp"
#include "tensorio/safetensors.hpp"
#include "models/transformer.hpp"

namespace kvbench::models {
namespace {
namespace fs = std::filesystem;

const fs::path kFixture = fs::path(KVBENCH_TESTS_DIR) / "fixtures" / "qwen3_reference";

nlohmann::json reference() {
  std::ifstream in(kFixture / "reference.json");
  return nlohmann::json::parse(in);
}

std::vector<int64_t> reference_ids() { return reference()["input_ids"].get<std::vector<int64_t>>(); }

torch::Tensor qwen3_logits(const LoadedModel& m, const std::vector<int64_t>& ids) {
  Transformer model(m.config, to_device(m.weights, torch::kCPU, torch::kFloat32));
  auto cache = model.make_cache(policies::PositionMode::kOriginal);
  return model.forward(ids, 0, cache, {}, /*all_logits=*/true);
}

double largest_difference(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

TEST(Qwen3, ConfigReadsHeadDimAndQkNorm) {
  const LoadedModel m = load_model(kFixture.string());
  EXPECT_EQ(m.config.architecture, "qwen3");
  EXPECT_TRUE(m.config.qk_norm);
  EXPECT_FALSE(m.config.qkv_bias);
  EXPECT_EQ(m.config.head_dim, 16);
  EXPECT_EQ(m.config.dim / m.config.n_heads, 8);
  EXPECT_TRUE(m.config.tied_embeddings);
  ASSERT_TRUE(m.weights.layers[0].q_norm.defined());
  EXPECT_EQ(m.weights.layers[0].q_norm.sizes(), torch::IntArrayRef({16}));
}

TEST(Qwen3, LogitsMatchTheIndependentReference) {
  const LoadedModel m = load_model(kFixture.string());
  const torch::Tensor theirs = SafetensorsFile::open((kFixture / "reference_logits.safetensors").string()).tensor("logits");
  const torch::Tensor ours = qwen3_logits(m, reference_ids());
  ASSERT_EQ(ours.sizes(), theirs.sizes());
  EXPECT_LE(largest_difference(ours, theirs), 1e-4);
}

TEST(Qwen3, CachedGreedyDecodingMatchesTheReference) {
  const LoadedModel m = load_model(kFixture.string());
  Transformer model(m.config, to_device(m.weights, torch::kCPU, torch::kFloat32));
  const auto ref = reference();
  const auto ids = ref["input_ids"].get<std::vector<int64_t>>();
  const int64_t prompt_len = ref["greedy_prompt_len"];
  const auto expected = ref["greedy_ids"].get<std::vector<int64_t>>();
  InferenceSession session(model, nullptr, {});
  torch::Tensor logits = session.prefill({ids.begin(), ids.begin() + prompt_len}).reshape({-1});
  std::vector<int64_t> generated;
  for (size_t i = 0; i < expected.size(); ++i) {
    generated.push_back(logits.argmax().item<int64_t>());
    logits = session.step(generated.back());
  }
  EXPECT_EQ(generated, expected);
}

TEST(Qwen3, QkNormWeightsChangeTheLogits) {
  // Guards the test itself: with q_norm/k_norm all ones the model is another model.
  const LoadedModel m = load_model(kFixture.string());
  LoadedModel ones = load_model(kFixture.string());
  for (auto& l : ones.weights.layers) {
    l.q_norm = torch::ones_like(l.q_norm);
    l.k_norm = torch::ones_like(l.k_norm);
  }
  EXPECT_GT(largest_difference(qwen3_logits(ones, reference_ids()), qwen3_logits(m, reference_ids())), 1e-2);
}

// Layer 0's rotated queries and keys computed by hand from the weights: RMSNorm of the input,
// projection, RMSNorm of each head over head_dim with q_norm/k_norm, then the half-split rotation.
struct HandQk {
  torch::Tensor q, k;  // [heads, T, hd]
};

enum class NormPlacement { kPerHeadBeforeRope, kPerHeadAfterRope, kWholeProjection };

HandQk layer0_by_hand(const LoadedModel& m, const std::vector<int64_t>& ids, NormPlacement placement) {
  const ModelConfig& c = m.config;
  const LayerWeights& w = m.weights.layers[0];
  const int64_t T = static_cast<int64_t>(ids.size()), hd = c.head_dim;
  auto rms = [&](const torch::Tensor& x, const torch::Tensor& weight) {
    return weight * (x / torch::sqrt(x.square().mean(-1, true) + c.norm_eps));
  };
  torch::Tensor x = m.weights.embedding.index_select(0, torch::tensor(ids)).to(torch::kFloat64);
  torch::Tensor h = rms(x, w.attn_norm.to(torch::kFloat64));
  torch::Tensor inv_freq = 1.0 / torch::pow(c.rope_theta, torch::arange(0, hd, 2, torch::kFloat64) / hd);
  torch::Tensor angles = torch::outer(torch::arange(T, torch::kFloat64), inv_freq);
  torch::Tensor cos = torch::cat({angles, angles}, -1).cos(), sin = torch::cat({angles, angles}, -1).sin();
  auto rotate = [&](const torch::Tensor& t) {  // t [heads, T, hd]
    torch::Tensor half = torch::cat({-t.narrow(-1, hd / 2, hd / 2), t.narrow(-1, 0, hd / 2)}, -1);
    return t * cos + half * sin;
  };
  auto heads = [&](const torch::Tensor& proj, const torch::Tensor& norm, int64_t n) {
    torch::Tensor y = torch::matmul(h, proj.to(torch::kFloat64).t());  // [T, n*hd]
    const torch::Tensor g = norm.to(torch::kFloat64);
    if (placement == NormPlacement::kWholeProjection) {
      // A plausible mistake: one RMS over all heads together, the weight tiled per head.
      y = rms(y, g.repeat({n}));
      return rotate(y.reshape({T, n, hd}).transpose(0, 1));
    }
    torch::Tensor per_head = y.reshape({T, n, hd}).transpose(0, 1);  // [n, T, hd]
    if (placement == NormPlacement::kPerHeadBeforeRope) return rotate(rms(per_head, g));
    return rms(rotate(per_head), g);
  };
  return {heads(w.wq, w.q_norm, c.n_heads), heads(w.wk, w.k_norm, c.n_kv_heads)};
}

TEST(Qwen3, NormIsAppliedPerHeadBeforeRope) {
  const LoadedModel m = load_model(kFixture.string());
  Transformer model(m.config, to_device(m.weights, torch::kCPU, torch::kFloat32));
  const std::vector<int64_t> all = reference_ids();
  const std::vector<int64_t> ids(all.begin(), all.begin() + 10);
  torch::Tensor q0, k0;
  CacheControl control;
  control.on_attention = [&](int64_t layer, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor&,
                             const torch::Tensor&, const torch::Tensor&) {
    if (layer == 0) {
      q0 = q.to(torch::kFloat64).clone();
      k0 = k.to(torch::kFloat64).clone();
    }
  };
  auto cache = model.make_cache(policies::PositionMode::kOriginal);
  model.forward(ids, 0, cache, control, true);
  ASSERT_TRUE(q0.defined());
  const HandQk right = layer0_by_hand(m, ids, NormPlacement::kPerHeadBeforeRope);
  EXPECT_LE(largest_difference(q0, right.q), 1e-4);
  EXPECT_LE(largest_difference(k0, right.k), 1e-4);
  // The alternatives a wrong implementation would compute are measurably different.
  for (NormPlacement wrong : {NormPlacement::kPerHeadAfterRope, NormPlacement::kWholeProjection}) {
    const HandQk other = layer0_by_hand(m, ids, wrong);
    EXPECT_GT(largest_difference(q0, other.q), 1e-2);
    EXPECT_GT(largest_difference(k0, other.k), 1e-2);
  }
}

// A copy of the fixture with config.json edited, for the error cases.
fs::path fixture_copy_with(const std::function<void(nlohmann::json&)>& edit) {
  std::string templ = (fs::temp_directory_path() / "kvbench-qwen3-XXXXXX").string();
  if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
  for (const char* f : {"model.safetensors", "tokenizer.model"}) fs::copy_file(kFixture / f, fs::path(templ) / f);
  std::ifstream in(kFixture / "config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  edit(config);
  std::ofstream(fs::path(templ) / "config.json") << config.dump(2);
  return templ;
}

TEST(Qwen3, HeadDimDefaultsTo128AsQwen3Config) {
  const fs::path dir = fixture_copy_with([](nlohmann::json& c) { c.erase("head_dim"); });
  try {
    load_model(dir.string());
    ADD_FAILURE() << "shapes for head_dim 16 loaded as 128";
  } catch (const ModelLoadError& e) {
    // Without head_dim, transformers uses 128 (not hidden/heads): the 16-wide tensors no longer fit.
    EXPECT_NE(std::string(e.what()).find("[512, 32]"), std::string::npos) << e.what();
  }
  harness::remove_tree(dir.string());
}

TEST(Qwen3, AttentionBiasAndMissingNormsAreClearErrors) {
  const fs::path bias = fixture_copy_with([](nlohmann::json& c) { c["attention_bias"] = true; });
  EXPECT_THROW(
      {
        try {
          load_model(bias.string());
        } catch (const ModelLoadError& e) {
          EXPECT_NE(std::string(e.what()).find("attention_bias"), std::string::npos) << e.what();
          throw;
        }
      },
      ModelLoadError);
  harness::remove_tree(bias.string());
  // Declared qwen3 without the norm tensors: loading fails naming the tensor.
  const fs::path dir = fixture_copy_with([](nlohmann::json&) {});
  std::vector<std::pair<std::string, torch::Tensor>> kept;
  {
    auto file = SafetensorsFile::open((dir / "model.safetensors").string());
    for (const auto& name : file.names())
      if (name.find("q_norm") == std::string::npos) kept.emplace_back(name, file.tensor(name).clone());
  }
  write_safetensors((dir / "model.safetensors").string(), kept);
  try {
    load_model(dir.string());
    ADD_FAILURE() << "loaded without q_norm";
  } catch (const ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("self_attn.q_norm.weight"), std::string::npos) << e.what();
  }
  harness::remove_tree(dir.string());
}

}  // namespace
}  // namespace kvbench::models
