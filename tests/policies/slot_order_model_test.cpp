// The order-free policies on the real model: a session whose cache moves slots (SlotOrder::kAny,
// the default for these policies) predicts what the arrival-ordered cache predicts, token by
// token, and holds the same tokens; for cache_slot positions this checks that keys are rotated
// by their arrival rank, not their slot.
#include <gtest/gtest.h>

#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

std::set<int64_t> positions_kept(const LayerCache& cache, int64_t head) {
  torch::Tensor pos = cache.positions()[head], valid = cache.valid();  // valid: ragged (Ada-KV) heads
  std::set<int64_t> out;
  for (int64_t j = 0; j < cache.size(); ++j)
    if (!valid.defined() || valid[head][j].item<bool>()) out.insert(pos[j].item<int64_t>());
  return out;
}

TEST(SlotOrderModel, MovingSlotsChangesNoPrediction) {
  models::LoadedModel loaded = models::load_model("stories260K");
  models::Transformer model(loaded.config, loaded.weights);
  std::vector<int64_t> prompt{1};
  for (int i = 1; i < 70; ++i) prompt.push_back(3 + (i * 131) % 500);
  const std::vector<std::pair<std::string, nlohmann::json>> cases{
      {"local", nlohmann::json::object()}, {"local", {{"positions", "cache_slot"}}}, {"streaming_llm", nlohmann::json::object()}, {"streaming_llm", {{"positions", "original"}}},
      {"h2o", nlohmann::json::object()}, {"tova", nlohmann::json::object()},                              {"scissorhands", nlohmann::json::object()}, {"random", nlohmann::json::object()},
      {"snapkv", {{"window", 4}}}, {"snapkv", {{"window", 4}, {"gqa", "reduce"}}}, {"pyramidkv", {{"window", 4}}}, {"cascade", {{"sinks", 2}}},
      {"roco", nlohmann::json::object()}, {"roco", {{"importance", "random"}}}, {"roco", {{"scope", "std"}}},
      {"roco", {{"importance", "aqas"}, {"scope", "window"}, {"sinks", 2}}}, {"roco", {{"importance", "ltas"}, {"shared_heads", true}}},
      {"adakv", {{"window", 4}}}, {"adakv", {{"window", 4}, {"gqa", "reduce"}}}, {"adakv", {{"scorer", "h2o"}}}, {"kvec", {{"window", 4}, {"wide_window", 8}}},
      {"kvec", {{"window", 4}, {"wide_window", 8}, {"gqa", "reduce"}}}, {"bumblebee", nlohmann::json::object()}};
  for (const auto& [name, params] : cases) {
    for (int64_t block : {1, 6}) {
      auto p1 = make_policy(name, params), p2 = make_policy(name, params);
      models::SessionOptions options;
      options.protocol = models::Protocol::kStream;
      options.block = block;
      options.budget = Budget::tokens(24);
      models::InferenceSession ordered(model, p1.get(), options), moving(model, p2.get(), options);
      ordered.cache().set_slot_order(SlotOrder::kArrival);
      torch::Tensor a = ordered.prefill(prompt), b = moving.prefill(prompt);
      double worst = (a - b).abs().max().item<double>();
      int64_t next = 7;
      for (int s = 0; s < 40; ++s) {
        a = ordered.step(next);
        b = moving.step(next);
        worst = std::max(worst, (a - b).abs().max().item<double>());
        next = 3 + (next * 17) % 500;
      }
      const std::string label = name + " " + params.dump() + " block " + std::to_string(block);
      EXPECT_LE(worst, 1e-4) << label;
      EXPECT_FALSE(moving.cache().layer(0).in_arrival_order()) << label << ": no slot ever moved";
      for (int64_t l = 0; l < ordered.cache().n_layers(); ++l)
        for (int64_t h = 0; h < ordered.cache().layer(l).kv_heads(); ++h)
          ASSERT_EQ(positions_kept(ordered.cache().layer(l), h), positions_kept(moving.cache().layer(l), h)) << label;
    }
  }
}

}  // namespace
}  // namespace kvbench::policies
