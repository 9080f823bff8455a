// Hostile checkpoints (a downloaded model directory is untrusted): config values that make RoPE's
// frequencies non-finite, finite weights that overflow in the forward, and an index entry whose
// file name hides a NUL. Each is an error naming the file and the field or the model, never a
// silent NaN result or another file read.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "error_text.hpp"
#include "model_load_error.hpp"
#include "models/generation.hpp"
#include "models/hf_config.hpp"
#include "models/perplexity.hpp"
#include "models/weight_checks.hpp"
#include "scratch_dirs.hpp"

namespace kvbench::models {
namespace {
namespace fs = std::filesystem;

using kvbench::testing::contains;
using kvbench::testing::error_of;

// A small llama config.json with `extra` merged in, one field per line.
std::string hostile_config_error(const nlohmann::json& extra) {
  nlohmann::json config = {{"model_type", "llama"},      {"hidden_size", 64},        {"intermediate_size", 128},
                           {"num_hidden_layers", 2},      {"num_attention_heads", 4}, {"vocab_size", 512},
                           {"max_position_embeddings", 256}};
  config.update(extra);
  return error_of([&] { parse_hf_config(config.dump(1), "config.json"); });
}

nlohmann::json llama3_scaling(double low, double high) {
  return {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", low}, {"high_freq_factor", high},
          {"original_max_position_embeddings", 128}};
}

// W3: 1e-300 is positive, but in float32 it is 0 and every frequency but the first is infinite.
TEST(HostileModel, ARopeThetaBelowOneIsRefused) {
  const std::string flat = hostile_config_error({{"rope_theta", 1e-300}});
  EXPECT_TRUE(contains(flat, "config.json:")) << flat;
  EXPECT_TRUE(contains(flat, "field 'rope_theta': must be at least 1")) << flat;
  const std::string nested = hostile_config_error({{"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1e-300}}}});
  EXPECT_TRUE(contains(nested, "field 'rope_theta': must be at least 1")) << nested;
  EXPECT_EQ(hostile_config_error({{"rope_theta", 500000.0}}), "(no error)");
}

// W3: an inverted or empty llama3 band divides by zero or scales the wrong wavelengths.
TEST(HostileModel, AnImpossibleLlama3BandIsRefused) {
  for (const auto& [low, high] : {std::pair<double, double>{4.0, 1.0}, {2.0, 2.0}}) {
    const std::string error = hostile_config_error({{"rope_scaling", llama3_scaling(low, high)}});
    EXPECT_TRUE(contains(error, "config.json:")) << error;
    EXPECT_TRUE(contains(error, "field 'high_freq_factor': must be greater than low_freq_factor")) << error;
  }
  const std::string zero = hostile_config_error({{"rope_scaling", llama3_scaling(0.0, 4.0)}});
  EXPECT_TRUE(contains(zero, "field 'low_freq_factor': must be positive")) << zero;
  nlohmann::json small_factor = llama3_scaling(1.0, 4.0);
  small_factor["factor"] = 1e-300;
  const std::string factor = hostile_config_error({{"rope_scaling", small_factor}});
  EXPECT_TRUE(contains(factor, "field 'factor': must be at least 1")) << factor;
  EXPECT_EQ(hostile_config_error({{"rope_scaling", llama3_scaling(1.0, 4.0)}}), "(no error)");
}

// W3: finite weights (so the load's check passes) whose products overflow float32: perplexity was
// nan with status 0, and generation emitted whatever argmax made of NaN.
TEST(HostileModel, NonFiniteLogitsAreAnErrorNamingTheModel) {
  const LoadedModel loaded = load_model("stories260K");
  ModelWeights weights = loaded.weights;
  weights.layers[0].wq = torch::full_like(weights.layers[0].wq, 3e38f);
  EXPECT_NO_THROW(check_finite_weights(weights, loaded.weights_path));
  const Transformer model(loaded.config, weights);
  const std::vector<int64_t> tokens{1, 403, 407, 261, 378};
  const std::string expected = loaded.weights_path + ": the forward pass gave non-finite logits";
  InferenceSession scoring(model, nullptr, SessionOptions{});
  const std::string perplexity = error_of([&] { evaluate_perplexity(scoring, tokens); });
  EXPECT_TRUE(contains(perplexity, expected)) << perplexity;
  InferenceSession generating(model, nullptr, SessionOptions{});
  GenerationOptions options;
  options.max_new_tokens = 4;
  const std::string generation = error_of([&] { generate(generating, tokens, options); });
  EXPECT_TRUE(contains(generation, expected)) << generation;
}

// W4: "model-00002.safetensors\0.x" was cut at the NUL, and another file was opened.
TEST(HostileModel, ShardNamesWithControlCharactersAreRefusedNamingTheTensor) {
  for (const std::string bad : {std::string("model-00002.safetensors\0.x", 26), std::string("model\n.safetensors"),
                                std::string("model\x7f.safetensors")}) {
    const fs::path dir = testing::fresh_dir("kvbench-hostile");
    std::ofstream(dir / "config.json") << R"({"model_type": "llama"})";
    std::ofstream(dir / "model-00002.safetensors") << "";
    std::ofstream(dir / "model.safetensors.index.json")
        << nlohmann::json{{"weight_map", {{"model.embed_tokens.weight", bad}}}}.dump();
    const std::string error = testing::model_load_error(dir.string());
    EXPECT_TRUE(contains(error, (dir / "model.safetensors.index.json").string() +
                                    ": weight_map['model.embed_tokens.weight']: the shard name " +
                                    nlohmann::json(bad).dump() + " holds a control character"))
        << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace kvbench::models
