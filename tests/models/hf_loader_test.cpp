// The Hugging Face loader against the llama2.c one: stories260K written as an HF checkpoint (q/k
// rows permuted into HF's half-split rotary layout, as transformers' conversion script does) must
// give the same logits; bf16, sharded, untied and qwen2 variants; and every malformed input is one
// clear error naming the file and the field.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <limits>

#include "models/hf_config.hpp"
#include "tokenizers/model_error.hpp"
#include "models/model_loader.hpp"
#include "tensorio/safetensors.hpp"
#include "models/transformer.hpp"
#include "model_load_error.hpp"
#include "safetensors_header_edit.hpp"
#include "scratch_dirs.hpp"

namespace kvbench::models {
namespace {
namespace fs = std::filesystem;

const std::string kStories = std::string(KVBENCH_SHARED_DIR) + "/models/stories260K";

fs::path fresh_dir() { return testing::fresh_dir("kvbench-hf"); }

// transformers' convert_llama_weights_to_hf permute(): interleaved pairs -> half-split rows.
torch::Tensor to_half_split(const torch::Tensor& w, int64_t heads) {
  const int64_t rows = w.size(0), cols = w.size(1);
  return w.reshape({heads, rows / heads / 2, 2, cols}).transpose(1, 2).reshape({rows, cols});
}

struct HfWriteOptions {
  torch::ScalarType dtype = torch::kFloat32;
  bool tied = true;
  int shards = 1;
  std::string model_type = "llama";
  bool with_bias = false;
  uint64_t bias_seed = 0;  // nonzero: random biases
};

using Named = std::vector<std::pair<std::string, torch::Tensor>>;

Named hf_tensors(const LoadedModel& m, const HfWriteOptions& o) {
  const ModelConfig& c = m.config;
  const ModelWeights& w = m.weights;
  Named t;
  auto add = [&](const std::string& name, const torch::Tensor& x) { t.emplace_back(name, x.to(o.dtype).contiguous()); };
  add("model.embed_tokens.weight", w.embedding);
  if (!o.tied) add("lm_head.weight", w.lm_head);
  add("model.norm.weight", w.final_norm);
  torch::manual_seed(static_cast<int64_t>(o.bias_seed));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", lw.attn_norm);
    add(p + "self_attn.q_proj.weight", to_half_split(lw.wq, c.n_heads));
    add(p + "self_attn.k_proj.weight", to_half_split(lw.wk, c.n_kv_heads));
    add(p + "self_attn.v_proj.weight", lw.wv);
    add(p + "self_attn.o_proj.weight", lw.wo);
    if (o.with_bias) {
      for (const char* proj : {"q", "k", "v"}) {
        const int64_t n = std::string(proj) == "q" ? lw.wq.size(0) : lw.wk.size(0);
        add(p + "self_attn." + proj + "_proj.bias",
            o.bias_seed ? torch::randn({n}) * 0.5 : torch::zeros({n}));
      }
    }
    add(p + "post_attention_layernorm.weight", lw.ffn_norm);
    add(p + "mlp.gate_proj.weight", lw.w_gate);
    add(p + "mlp.up_proj.weight", lw.w_up);
    add(p + "mlp.down_proj.weight", lw.w_down);
  }
  return t;
}

nlohmann::json hf_config(const ModelConfig& c, const HfWriteOptions& o) {
  return {{"model_type", o.model_type},
          {"architectures", {"LlamaForCausalLM"}},
          {"hidden_size", c.dim},
          {"intermediate_size", c.hidden_dim},
          {"num_hidden_layers", c.n_layers},
          {"num_attention_heads", c.n_heads},
          {"num_key_value_heads", c.n_kv_heads},
          {"vocab_size", c.vocab_size},
          {"max_position_embeddings", c.max_seq_len},
          {"rms_norm_eps", c.norm_eps},
          {"rope_theta", c.rope_theta},
          {"rope_scaling", nullptr},
          {"hidden_act", "silu"},
          {"tie_word_embeddings", o.tied},
          {"torch_dtype", o.dtype == torch::kBFloat16 ? "bfloat16" : "float32"}};
}

void write_json(const fs::path& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(2) << "\n"; }

fs::path write_hf(const LoadedModel& m, const HfWriteOptions& o) {
  fs::path dir = fresh_dir();
  write_json(dir / "config.json", hf_config(m.config, o));
  fs::copy_file(kStories + "/tok512.model", dir / "tokenizer.model");
  Named tensors = hf_tensors(m, o);
  if (o.shards == 1) {
    write_safetensors((dir / "model.safetensors").string(), tensors);
    return dir;
  }
  nlohmann::json map = nlohmann::json::object();
  const size_t per = (tensors.size() + o.shards - 1) / o.shards;
  for (int s = 0; s < o.shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, o.shards);
    Named part(tensors.begin() + std::min(tensors.size(), s * per), tensors.begin() + std::min(tensors.size(), (s + 1) * per));
    for (const auto& [n, t] : part) map[n] = name;
    write_safetensors((dir / name).string(), part);
  }
  write_json(dir / "model.safetensors.index.json", {{"metadata", {{"total_size", 0}}}, {"weight_map", map}});
  return dir;
}

torch::Tensor logits_of(const LoadedModel& m) {
  Transformer model(m.config, to_device(m.weights, torch::kCPU, torch::kFloat32));
  auto cache = model.make_cache(policies::PositionMode::kOriginal);
  std::vector<int64_t> tokens{1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 290, 311, 262};
  return model.forward(tokens, 0, cache, {}, /*all_logits=*/true);
}

class HfLoader : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    stories_ = new LoadedModel(load_model(kStories));
    reference_ = new torch::Tensor(logits_of(*stories_));
  }
  static LoadedModel* stories_;
  static torch::Tensor* reference_;
};
LoadedModel* HfLoader::stories_ = nullptr;
torch::Tensor* HfLoader::reference_ = nullptr;

double max_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

TEST_F(HfLoader, Float32CheckpointGivesTheLlama2cLogits) {
  fs::path dir = write_hf(*stories_, {});
  LoadedModel hf = load_model(dir.string());
  EXPECT_EQ(hf.format, "hf");
  EXPECT_EQ(hf.config.rope_style, RopeStyle::kHalfSplit);
  EXPECT_EQ(hf.config.n_kv_heads, 4);
  EXPECT_TRUE(hf.weights.lm_head.is_same(hf.weights.embedding));
  EXPECT_LE(max_diff(logits_of(hf), *reference_), 1e-4);
}

TEST_F(HfLoader, WithoutThePermutationTheLogitsDiffer) {
  // Guards the test itself: the rotary layout matters, so a loader that ignored it would fail.
  LoadedModel hf = load_model(write_hf(*stories_, {}).string());
  hf.config.rope_style = RopeStyle::kInterleaved;
  EXPECT_GT(max_diff(logits_of(hf), *reference_), 1e-2);
}

TEST_F(HfLoader, Bfloat16CheckpointAgreesWithinBfloat16Tolerance) {
  LoadedModel hf = load_model(write_hf(*stories_, {torch::kBFloat16}).string());
  EXPECT_EQ(hf.weights.layers[0].wq.scalar_type(), torch::kBFloat16);
  const torch::Tensor logits = logits_of(hf);
  const double diff = max_diff(logits, *reference_);
  // bf16 keeps 8 significant bits (relative error <= 2^-9 per weight): logits of magnitude ~10
  // move by a few hundredths, never by whole units; the greedy choice stays the same.
  EXPECT_GT(diff, 0.0);
  EXPECT_LE(diff, 0.02 * reference_->abs().max().item<double>());
  EXPECT_TRUE(logits.argmax(-1).equal(reference_->argmax(-1)));
}

TEST_F(HfLoader, ShardedCheckpointWithIndexLoads) {
  fs::path dir = write_hf(*stories_, {torch::kFloat32, true, 2});
  EXPECT_TRUE(fs::exists(dir / "model-00002-of-00002.safetensors"));
  LoadedModel located = locate_model(dir.string());
  EXPECT_EQ(located.weight_files.size(), 3u);  // config.json + 2 shards
  EXPECT_TRUE(logits_of(load_model(dir.string())).equal(logits_of(load_model(write_hf(*stories_, {}).string()))));
}

TEST_F(HfLoader, UntiedHeadIsRead) {
  LoadedModel hf = load_model(write_hf(*stories_, {torch::kFloat32, false}).string());
  EXPECT_FALSE(hf.weights.lm_head.is_same(hf.weights.embedding));
  EXPECT_LE(max_diff(logits_of(hf), *reference_), 1e-4);
}

TEST_F(HfLoader, Qwen2BiasesAreApplied) {
  HfWriteOptions zero{torch::kFloat32, true, 1, "qwen2", true, 0};
  LoadedModel with_zero = load_model(write_hf(*stories_, zero).string());
  EXPECT_TRUE(with_zero.config.qkv_bias);
  EXPECT_LE(max_diff(logits_of(with_zero), *reference_), 1e-4);
  HfWriteOptions random = zero;
  random.bias_seed = 5;
  EXPECT_GT(max_diff(logits_of(load_model(write_hf(*stories_, random).string())), *reference_), 1e-2);
}

// ---- malformed checkpoints: one clear error each ----

std::string load_error(const fs::path& dir) { return testing::model_load_error(dir.string()); }

TEST_F(HfLoader, WrongHeaderLengthIsNamed) {
  fs::path dir = write_hf(*stories_, {});
  std::fstream f(dir / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
  const uint64_t huge = uint64_t{1} << 40;
  f.write(reinterpret_cast<const char*>(&huge), 8);
  f.close();
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("model.safetensors"), std::string::npos) << error;
  EXPECT_NE(error.find("wrong header length"), std::string::npos) << error;
}


TEST_F(HfLoader, UnknownDtypeIsNamed) {
  fs::path dir = write_hf(*stories_, {});
  testing::edit_safetensors_header(dir / "model.safetensors", [](nlohmann::json& h) { h["model.norm.weight"]["dtype"] = "F8_E4M3"; });
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("model.norm.weight"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown dtype 'F8_E4M3'"), std::string::npos) << error;
}

TEST_F(HfLoader, MissingTensorIsNamed) {
  fs::path dir = write_hf(*stories_, {});
  testing::edit_safetensors_header(dir / "model.safetensors", [](nlohmann::json& h) { h.erase("model.layers.3.mlp.up_proj.weight"); });
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("missing tensor 'model.layers.3.mlp.up_proj.weight'"), std::string::npos) << error;
}

TEST_F(HfLoader, ShapeMismatchIsNamed) {
  fs::path dir = write_hf(*stories_, {});
  nlohmann::json config = hf_config(stories_->config, {});
  config["intermediate_size"] = stories_->config.hidden_dim + 8;
  write_json(dir / "config.json", config);
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("w_gate"), std::string::npos) << error;
  EXPECT_NE(error.find("shape"), std::string::npos) << error;
}

TEST_F(HfLoader, OffsetsThatDisagreeWithTheShapeAreNamed) {
  fs::path dir = write_hf(*stories_, {});
  testing::edit_safetensors_header(dir / "model.safetensors", [](nlohmann::json& h) { h["model.norm.weight"]["shape"] = {3, 7}; });
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("tensor 'model.norm.weight': field 'data_offsets'"), std::string::npos) << error;
}

TEST_F(HfLoader, ConfigMissingAFieldIsNamed) {
  fs::path dir = write_hf(*stories_, {});
  nlohmann::json config = hf_config(stories_->config, {});
  config.erase("num_hidden_layers");
  write_json(dir / "config.json", config);
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("config.json"), std::string::npos) << error;
  EXPECT_NE(error.find("missing field 'num_hidden_layers'"), std::string::npos) << error;
}

TEST_F(HfLoader, ConfigFieldOfTheWrongTypeNamesItsLine) {
  fs::path dir = write_hf(*stories_, {});
  nlohmann::json config = hf_config(stories_->config, {});
  config["num_attention_heads"] = "eight";
  write_json(dir / "config.json", config);  // dump(2): one field per line, sorted keys
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("config.json:"), std::string::npos) << error;
  EXPECT_NE(error.find("field 'num_attention_heads': must be an integer"), std::string::npos) << error;
}

TEST_F(HfLoader, UnsupportedRopeTypeIsNamed) {
  fs::path dir = write_hf(*stories_, {});
  nlohmann::json config = hf_config(stories_->config, {});
  config["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  write_json(dir / "config.json", config);
  EXPECT_NE(load_error(dir).find("rope type 'yarn' is not supported"), std::string::npos);
}

TEST_F(HfLoader, MissingTokenizerIsNamed) {
  fs::path dir = write_hf(*stories_, {});
  fs::remove(dir / "tokenizer.model");
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("no tokenizer in this directory"), std::string::npos) << error;
}

TEST(HfConfig, TransformersFiveRopeParametersAreRead) {
  fs::path dir = fresh_dir();
  write_json(dir / "config.json",
             {{"model_type", "llama"}, {"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 2},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"vocab_size", 512},
              {"max_position_embeddings", 1024}, {"dtype", "bfloat16"},
              {"rope_parameters", {{"rope_type", "llama3"}, {"rope_theta", 500000.0}, {"factor", 8.0},
                                   {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                                   {"original_max_position_embeddings", 256}}}});
  const ModelConfig c = read_hf_config((dir / "config.json").string());
  EXPECT_EQ(c.rope_theta, 500000.0);
  EXPECT_EQ(c.rope_scaling.type, RopeScalingType::kLlama3);
  EXPECT_EQ(c.rope_scaling.factor, 8.0);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 256);
  EXPECT_EQ(c.dtype, "bfloat16");
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_EQ(c.norm_eps, 1e-6);  // LlamaConfig's default
}

TEST(HfConfig, TransformersFourRopeScalingAndFamilyDefaults) {
  fs::path dir = fresh_dir();
  write_json(dir / "config.json",
             {{"model_type", "mistral"}, {"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 2},
              {"num_attention_heads", 4}, {"vocab_size", 512}, {"sliding_window", 4096}, {"rope_theta", 1e6},
              {"rope_scaling", {{"type", "linear"}, {"factor", 2.0}}}});
  const ModelConfig c = read_hf_config((dir / "config.json").string());
  EXPECT_EQ(c.n_kv_heads, 4);  // defaults to num_attention_heads
  EXPECT_EQ(c.rope_theta, 1e6);
  EXPECT_EQ(c.rope_scaling.type, RopeScalingType::kLinear);
  EXPECT_EQ(c.rope_scaling.factor, 2.0);
  EXPECT_EQ(c.sliding_window, 4096);
  EXPECT_EQ(c.norm_eps, 1e-6);       // MistralConfig's default
  EXPECT_EQ(c.max_seq_len, 131072);  // MistralConfig's default 4096 * 32
  EXPECT_FALSE(c.tied_embeddings);
}


// Issue #14: damaged checkpoints are refused at load, naming the file and the tensor or field.
TEST_F(HfLoader, NanWeightIsRefusedNamingTheTensor) {
  ModelWeights broken = stories_->weights;
  broken.layers[2].wk = broken.layers[2].wk.clone();
  broken.layers[2].wk[3][5] = std::numeric_limits<float>::quiet_NaN();
  LoadedModel m = *stories_;
  m.weights = broken;
  fs::path dir = write_hf(m, {});
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("tensor 'layers.2.wk' holds NaN or infinite values"), std::string::npos) << error;
  broken.layers[2].wk[3][5] = std::numeric_limits<float>::infinity();
  m.weights = broken;
  EXPECT_NE(load_error(write_hf(m, {})).find("layers.2.wk"), std::string::npos);
}

TEST_F(HfLoader, NonPositiveRmsNormEpsIsRefused) {
  for (double eps : {-1e-5, 0.0}) {
    fs::path dir = write_hf(*stories_, {});
    nlohmann::json config = hf_config(stories_->config, {});
    config["rms_norm_eps"] = eps;
    write_json(dir / "config.json", config);
    const std::string error = load_error(dir);
    EXPECT_NE(error.find("field 'rms_norm_eps': must be in (0, 1)"), std::string::npos) << error;
    EXPECT_NE(error.find("config.json:"), std::string::npos) << error;
  }
}

TEST_F(HfLoader, OverlappingDataOffsetsAreRefused) {
  fs::path dir = write_hf(*stories_, {});
  testing::edit_safetensors_header(dir / "model.safetensors", [](nlohmann::json& h) {
    // Two norms of the same size: point the second at the first one's bytes.
    h["model.layers.1.input_layernorm.weight"]["data_offsets"] = h["model.layers.0.input_layernorm.weight"]["data_offsets"];
  });
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("overlap"), std::string::npos) << error;
  EXPECT_NE(error.find("model.layers.0.input_layernorm.weight"), std::string::npos) << error;
}

TEST_F(HfLoader, WeightMapThatIsNotAnObjectIsNamedAsSuch) {
  HfWriteOptions sharded;
  sharded.shards = 2;
  fs::path dir = write_hf(*stories_, sharded);
  write_json(dir / "model.safetensors.index.json", {{"weight_map", nlohmann::json::array({"a", "b"})}});
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("field 'weight_map' must be an object"), std::string::npos) << error;
  EXPECT_EQ(error.find("missing"), std::string::npos) << error;
}

}  // namespace
}  // namespace kvbench::models
