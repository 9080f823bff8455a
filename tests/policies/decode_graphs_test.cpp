// CacheControl::decode_graphs: a decoding step's dense work as pieces between the attentions
// (models/captured_pieces.hpp), captured as CUDA graphs on a GPU and called as they are here. The
// pieces must give the plain forward's logits and cache bit for bit under every policy, evicting
// every step (decode) or once (oneshot): the buffers they read (token, position, each layer's
// attention output) are refilled every step, RoPE reads its table at the device-side position,
// and the attention, the append and the policy run between them as in the plain forward. What a
// GPU adds (the capture and the replay) is Cuda.DecodeGraphsGiveThePlainStepsLogits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "every_policy.hpp"
#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "models/transformer.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

struct GraphedRun {
  std::vector<torch::Tensor> logits;
  std::vector<torch::Tensor> cache;  // each layer's keys, values and positions at the end
  std::string refusal;
  int64_t graphed = 0;  // steps that took the pieces
};

GraphedRun decode_with(const models::Transformer& model, const std::string& name, models::Protocol protocol, bool graphs) {
  std::unique_ptr<Policy> policy = name == "full" ? nullptr : make_policy(name, kvbench::testing::runnable_params(name, model.config()));
  models::SessionOptions options;
  options.text = kvbench::testing::stories_text();
  options.protocol = protocol;
  options.budget = kvbench::testing::policy_refuses(name, protocol, true) ? Budget::unlimited() : Budget::tokens(40);
  options.cuda_graphs = graphs;
  GraphedRun run;
  const int64_t before = model.graphed_steps();
  try {
    models::InferenceSession session(model, policy.get(), options);
    std::vector<int64_t> prompt{1};
    for (int64_t i = 0; i < 79; ++i) prompt.push_back(3 + (i * 149 + 5) % 500);
    torch::Tensor logits = session.prefill(prompt);
    for (int s = 0; s < 8; ++s) run.logits.push_back(logits = session.step(logits.reshape({-1}).argmax().item<int64_t>()));
    for (int64_t l = 0; l < session.cache().n_layers(); ++l) {
      const LayerCache& layer = session.cache().layer(l);
      run.cache.insert(run.cache.end(), {layer.keys().clone(), layer.values().clone(), layer.positions().clone()});
    }
  } catch (const std::invalid_argument& e) {
    run.refusal = e.what();
  }
  run.graphed = model.graphed_steps() - before;
  return run;
}

TEST(DecodeGraphs, PiecesGiveThePlainStepBitForBitUnderEveryPolicy) {
  const models::LoadedModel loaded = models::load_model("stories260K");
  const models::Transformer model(loaded.config, loaded.weights);
  std::vector<std::string> names{"full"};
  for (const auto& info : registered_policies()) names.push_back(info.name);
  int64_t graphed_runs = 0;
  for (const std::string& name : names) {
    for (const models::Protocol protocol : {models::Protocol::kOneShot, models::Protocol::kDecode}) {
      SCOPED_TRACE(name + (protocol == models::Protocol::kDecode ? " decode" : " oneshot"));
      const GraphedRun plain = decode_with(model, name, protocol, false), graphed = decode_with(model, name, protocol, true);
      EXPECT_EQ(plain.refusal, graphed.refusal);
      EXPECT_EQ(plain.graphed, 0);
      if (!graphed.refusal.empty()) continue;
      ASSERT_EQ(plain.logits.size(), graphed.logits.size());
      for (size_t i = 0; i < plain.logits.size(); ++i) EXPECT_TRUE(torch::equal(plain.logits[i], graphed.logits[i])) << "step " << i;
      ASSERT_EQ(plain.cache.size(), graphed.cache.size());
      for (size_t i = 0; i < plain.cache.size(); ++i)
        EXPECT_TRUE(plain.cache[i].sizes() == graphed.cache[i].sizes() && torch::equal(plain.cache[i], graphed.cache[i])) << "cache tensor " << i;
      if (graphed.graphed > 0) ++graphed_runs;
      if (name == "full" || name == "h2o" || name == "streaming_llm" || name == "snapkv" || name == "tova")
        EXPECT_EQ(graphed.graphed, 8) << "every step takes the pieces";
    }
  }
  EXPECT_GT(graphed_runs, static_cast<int64_t>(names.size()));  // most policies, under both protocols
}

}  // namespace
}  // namespace kvbench::policies
