// Hugging Face transformers itself is the reference: tests/fixtures/hf_reference holds tiny random
// checkpoints that transformers wrote (Llama with llama3 / linear / dynamic-NTK rope scaling,
// Mistral, Qwen2 with q/k/v biases, Qwen3 with q/k norms; transformers 5.x config spelling) together with the logits and
// the greedy continuation transformers computed for them (scripts/make_hf_reference.py).
// kvbench must load each and reproduce both.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "tensorio/safetensors.hpp"
#include "models/transformer.hpp"

namespace kvbench::models {
namespace {
namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(KVBENCH_TESTS_DIR) / "fixtures" / "hf_reference";

class TransformersReference : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = kFixtures / GetParam();
    ASSERT_TRUE(fs::exists(dir_ / "config.json")) << dir_;
    std::ifstream in(dir_ / "reference.json");
    reference_ = nlohmann::json::parse(in);
    loaded_ = load_model(dir_.string());
    model_ = std::make_unique<Transformer>(loaded_.config, to_device(loaded_.weights, torch::kCPU, torch::kFloat32));
  }
  fs::path dir_;
  nlohmann::json reference_;
  LoadedModel loaded_;
  std::unique_ptr<Transformer> model_;
};

TEST_P(TransformersReference, LogitsMatchTransformers) {
  const auto ids = reference_["input_ids"].get<std::vector<int64_t>>();
  auto cache = model_->make_cache(policies::PositionMode::kOriginal);
  torch::Tensor ours = model_->forward(ids, 0, cache, {}, /*all_logits=*/true);
  torch::Tensor theirs = SafetensorsFile::open((dir_ / "reference_logits.safetensors").string()).tensor("logits");
  ASSERT_EQ(ours.sizes(), theirs.sizes());
  EXPECT_LE((ours - theirs).abs().max().item<double>(), 1e-4) << GetParam();
}

TEST_P(TransformersReference, CachedGreedyDecodingMatchesTransformersGenerate) {
  const auto ids = reference_["input_ids"].get<std::vector<int64_t>>();
  const int64_t prompt_len = reference_["greedy_prompt_len"];
  const auto expected = reference_["greedy_ids"].get<std::vector<int64_t>>();
  InferenceSession session(*model_, nullptr, {});
  torch::Tensor logits = session.prefill({ids.begin(), ids.begin() + prompt_len}).reshape({-1});
  std::vector<int64_t> generated;
  for (size_t i = 0; i < expected.size(); ++i) {
    generated.push_back(logits.argmax().item<int64_t>());
    logits = session.step(generated.back());
  }
  EXPECT_EQ(generated, expected) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(HfCheckpoints, TransformersReference,
                         ::testing::Values("llama3_scaled", "llama_linear", "llama_dynamic", "mistral", "qwen2", "qwen3"));

}  // namespace
}  // namespace kvbench::models
