// HF checkpoints that hold something other than the config describes: integer weights, tensors the
// config does not use, shapes past int64, an index that lacks a tensor or points outside the model
// directory. Each is one ModelLoadError naming the file and the tensor or field, never a model that
// runs with different weights than the checkpoint holds.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "tokenizers/model_error.hpp"
#include "models/model_loader.hpp"
#include "tensorio/safetensors.hpp"
#include "model_load_error.hpp"
#include "safetensors_header_edit.hpp"
#include "scratch_dirs.hpp"

namespace kvbench::models {
namespace {
namespace fs = std::filesystem;

const std::string kStoriesModel = std::string(KVBENCH_SHARED_DIR) + "/models/stories260K";
using Named = std::vector<std::pair<std::string, torch::Tensor>>;

fs::path fresh_checkpoint_dir() { return testing::fresh_dir("kvbench-hfchk"); }

const LoadedModel& stories() {
  static const LoadedModel model = load_model(kStoriesModel);
  return model;
}

// stories260K's weights under HF names (the rotary layout does not matter here: nothing is run).
Named checkpoint_tensors() {
  const ModelWeights& w = stories().weights;
  Named t{{"model.embed_tokens.weight", w.embedding}, {"model.norm.weight", w.final_norm}};
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const LayerWeights& lw = w.layers[l];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.insert(t.end(), {{p + "input_layernorm.weight", lw.attn_norm},
                       {p + "self_attn.q_proj.weight", lw.wq},
                       {p + "self_attn.k_proj.weight", lw.wk},
                       {p + "self_attn.v_proj.weight", lw.wv},
                       {p + "self_attn.o_proj.weight", lw.wo},
                       {p + "post_attention_layernorm.weight", lw.ffn_norm},
                       {p + "mlp.gate_proj.weight", lw.w_gate},
                       {p + "mlp.up_proj.weight", lw.w_up},
                       {p + "mlp.down_proj.weight", lw.w_down}});
  }
  return t;
}

nlohmann::json checkpoint_config() {
  const ModelConfig& c = stories().config;
  return {{"model_type", "llama"},          {"hidden_size", c.dim},       {"intermediate_size", c.hidden_dim},
          {"num_hidden_layers", c.n_layers}, {"num_attention_heads", c.n_heads}, {"num_key_value_heads", c.n_kv_heads},
          {"vocab_size", c.vocab_size},      {"max_position_embeddings", c.max_seq_len},
          {"rms_norm_eps", c.norm_eps},      {"tie_word_embeddings", true}};
}

// config.json, tokenizer.model and model.safetensors holding `tensors`.
fs::path write_checkpoint(const Named& tensors, const nlohmann::json& config = checkpoint_config()) {
  fs::path dir = fresh_checkpoint_dir();
  std::ofstream(dir / "config.json") << config.dump(1) << "\n";
  fs::copy_file(kStoriesModel + "/tok512.model", dir / "tokenizer.model");
  write_safetensors((dir / "model.safetensors").string(), tensors);
  return dir;
}

// Moves model.safetensors to `shard` (relative to the directory) and lists every tensor there in
// an index whose weight_map `edit` may change.
void index_as(const fs::path& dir, const std::string& shard,
              const std::function<void(nlohmann::json&)>& edit = [](nlohmann::json&) {}) {
  fs::create_directories((dir / shard).parent_path());
  fs::rename(dir / "model.safetensors", dir / shard);
  nlohmann::json map = nlohmann::json::object();
  for (const auto& [name, t] : checkpoint_tensors()) map[name] = shard;
  edit(map);
  std::ofstream(dir / "model.safetensors.index.json") << nlohmann::json{{"weight_map", map}}.dump(1) << "\n";
}

std::string checkpoint_error(const fs::path& dir) { return testing::model_load_error(dir.string()); }

TEST(HfCheckpointChecks, TheUneditedCheckpointLoads) { EXPECT_EQ(checkpoint_error(write_checkpoint(checkpoint_tensors())), "(no error)"); }

// I32 has F32's byte count, so the offsets agree: the integers ran as weights (perplexity inf).
TEST(HfCheckpointChecks, IntegerWeightIsRefusedNamingFileAndTensor) {
  for (const char* tensor : {"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight"}) {
    const fs::path dir = write_checkpoint(checkpoint_tensors());
    testing::edit_safetensors_header(dir / "model.safetensors", [&](nlohmann::json& h) { h[tensor]["dtype"] = "I32"; });
    const std::string error = checkpoint_error(dir);
    EXPECT_NE(error.find((dir / "model.safetensors").string() + ": tensor '" + tensor + "' has dtype I32; model "
                         "weights must be floating point"), std::string::npos) << error;
  }
}

TEST(HfCheckpointChecks, ValidateWeightsRefusesIntegerTensors) {
  ModelWeights w = stories().weights;
  w.final_norm = w.final_norm.to(torch::kInt32);
  try {
    validate_weights(stories().config, w, "ck");
    FAIL() << "no error";
  } catch (const ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("ck: tensor 'final_norm' has dtype Int"), std::string::npos) << e.what();
  }
}

// A 5-layer checkpoint under a 4-layer config ran as a 4-layer model.
TEST(HfCheckpointChecks, LayersBeyondTheConfigAreRefused) {
  nlohmann::json config = checkpoint_config();
  const int64_t layers = stories().config.n_layers;
  config["num_hidden_layers"] = layers - 1;
  const fs::path dir = write_checkpoint(checkpoint_tensors(), config);
  const std::string error = checkpoint_error(dir);
  const std::string last = std::to_string(layers - 1);
  EXPECT_NE(error.find((dir / "model.safetensors").string() + ": holds tensors the config does not use"),
            std::string::npos) << error;
  EXPECT_NE(error.find("model.layers." + last + ".* (9 tensors; the config has " + last + " layers)"),
            std::string::npos) << error;
}

// An o_proj bias full of +inf was ignored: kvbench applies no o_proj bias.
TEST(HfCheckpointChecks, TensorTheConfigDoesNotUseIsRefused) {
  Named tensors = checkpoint_tensors();
  tensors.emplace_back("model.layers.0.self_attn.o_proj.bias",
                       torch::full({stories().config.dim}, std::numeric_limits<float>::infinity()));
  const std::string error = checkpoint_error(write_checkpoint(tensors));
  EXPECT_NE(error.find("does not use"), std::string::npos) << error;
  EXPECT_NE(error.find("model.layers.0.self_attn.o_proj.bias"), std::string::npos) << error;
}

// Real checkpoints carry these: older Llama exports save the rotary buffer; tied models may store
// lm_head too (the stored head is used).
TEST(HfCheckpointChecks, InvFreqBuffersAndAStoredTiedHeadLoad) {
  Named tensors = checkpoint_tensors();
  tensors.emplace_back("model.layers.0.self_attn.rotary_emb.inv_freq", torch::ones({stories().config.head_dim / 2}));
  tensors.emplace_back("lm_head.weight", stories().weights.embedding);
  EXPECT_EQ(checkpoint_error(write_checkpoint(tensors)), "(no error)");
}

// Past int64, libtorch said "negative dimension" with no file; a wrapped product said "need 0".
TEST(HfCheckpointChecks, ShapesPastInt64AreNamed) {
  const uint64_t two63 = uint64_t{1} << 63, two62 = uint64_t{1} << 62, two61 = uint64_t{1} << 61;
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{two63, 2}, "dimension 9223372036854775808 does not fit in int64"},
      {{two62, 4, 16}, "the product of its dimensions overflows 64 bits"},
      {{two61, 2}, "4611686018427387904 elements of F32 need more than 2^63-1 bytes"}};
  for (const auto& [shape, what] : cases) {
    const fs::path dir = write_checkpoint(checkpoint_tensors());
    testing::edit_safetensors_header(dir / "model.safetensors", [&](nlohmann::json& h) { h["model.norm.weight"]["shape"] = shape; });
    const std::string error = checkpoint_error(dir);
    EXPECT_NE(error.find((dir / "model.safetensors").string() + ": tensor 'model.norm.weight': field 'shape' " +
                         shape.dump() + ": " + what), std::string::npos) << error;
  }
}

TEST(HfCheckpointChecks, ShardInASubdirectoryLoads) {
  const fs::path dir = write_checkpoint(checkpoint_tensors());
  index_as(dir, "weights/model-00001-of-00001.safetensors");
  EXPECT_EQ(checkpoint_error(dir), "(no error)");
}

// transformers loads model.safetensors before looking for an index; so does kvbench, even when the
// index beside it names shards that are not there.
TEST(HfCheckpointChecks, ASingleFileWinsOverAnIndexBesideIt) {
  const fs::path dir = write_checkpoint(checkpoint_tensors());
  std::ofstream(dir / "model.safetensors.index.json")
      << nlohmann::json{{"weight_map", {{"model.norm.weight", "model-00001-of-00002.safetensors"}}}}.dump();
  EXPECT_EQ(checkpoint_error(dir), "(no error)");
}

// The shard holds the tensor; the index is what lacks it.
TEST(HfCheckpointChecks, TensorMissingFromTheIndexBlamesTheIndex) {
  const fs::path dir = write_checkpoint(checkpoint_tensors());
  index_as(dir, "model-00001-of-00001.safetensors", [](nlohmann::json& map) { map.erase("model.norm.weight"); });
  const std::string error = checkpoint_error(dir);
  EXPECT_NE(error.find((dir / "model.safetensors.index.json").string() +
                       ": weight_map has no entry for 'model.norm.weight'"), std::string::npos) << error;
}

TEST(HfCheckpointChecks, IndexEntriesOutsideTheModelDirectoryAreRefused) {
  const fs::path elsewhere = write_checkpoint(checkpoint_tensors());
  for (const std::string& target : {std::string("../") + elsewhere.filename().string() + "/model.safetensors",
                                    (elsewhere / "model.safetensors").string(), std::string("")}) {
    const fs::path dir = write_checkpoint(checkpoint_tensors());
    index_as(dir, "model-00001-of-00001.safetensors", [&](nlohmann::json& map) { map["model.norm.weight"] = target; });
    const std::string error = checkpoint_error(dir);
    EXPECT_NE(error.find((dir / "model.safetensors.index.json").string() + ": weight_map['model.norm.weight'] is \"" +
                         target + "\": a shard must be a file in the model directory"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace kvbench::models
