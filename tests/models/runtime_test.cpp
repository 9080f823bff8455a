// The runtime against ground truth: karpathy's run.c greedy ids and logits for stories260K, and
// cached decoding against recomputation.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include "models/generation.hpp"
#include "models/model_loader.hpp"
#include "models/sampler.hpp"
#include "tokenizers/tokenizer.hpp"
#include "models/transformer.hpp"

namespace kvbench::models {
namespace {

const std::string kModelDir = std::string(KVBENCH_SHARED_DIR) + "/models/stories260K";

std::vector<double> parse_numbers(const std::string& list) {
  std::vector<double> out;
  std::regex number(R"(-?\d+(\.\d+)?)");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), number); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod(it->str()));
  return out;
}

struct Golden {
  std::vector<int64_t> ids;
  int64_t logits_pos = 0;
  std::vector<double> logits;
};

Golden read_golden() {
  std::ifstream in(kModelDir + "/golden_greedy.txt");
  Golden g;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("greedy_ids_from_BOS", 0) == 0) {
      for (double v : parse_numbers(line.substr(line.find('['))))
        g.ids.push_back(static_cast<int64_t>(v));
    } else if (line.rfind("logits[pos=", 0) == 0) {
      g.logits_pos = std::stoll(line.substr(11));
      g.logits = parse_numbers(line.substr(line.find(' ')));
    }
  }
  return g;
}

class Stories260K : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new LoadedModel(load_model(kModelDir));
    model_ = new Transformer(loaded_->config, loaded_->weights);
  }
  static LoadedModel* loaded_;
  static Transformer* model_;
};
LoadedModel* Stories260K::loaded_ = nullptr;
Transformer* Stories260K::model_ = nullptr;

TEST_F(Stories260K, GreedyFromBosReproducesRunC) {
  Golden golden = read_golden();
  ASSERT_GT(golden.ids.size(), 50u);
  InferenceSession session(*model_, nullptr, {});
  GenerationOptions options;
  options.max_new_tokens = static_cast<int64_t>(golden.ids.size()) - 1;
  GenerationResult out = generate(session, {golden.ids[0]}, options);
  std::vector<int64_t> expected(golden.ids.begin() + 1, golden.ids.end());
  EXPECT_EQ(out.tokens, expected);
}

// to_device puts q/k/v (and gate/up) as consecutive row blocks of one buffer, with the loaded
// values, and a transformer built on them gives the same logits as one that concatenates.
TEST_F(Stories260K, ToDeviceStacksTheFusedProjectionsInOneBuffer) {
  const ModelWeights placed = to_device(loaded_->weights, torch::kCPU, torch::kFloat32);
  for (size_t l = 0; l < placed.layers.size(); ++l) {
    const LayerWeights& w = placed.layers[l];
    const LayerWeights& original = loaded_->weights.layers[l];
    EXPECT_EQ(w.wk.data_ptr<float>(), w.wq.data_ptr<float>() + w.wq.numel()) << l;
    EXPECT_EQ(w.wv.data_ptr<float>(), w.wk.data_ptr<float>() + w.wk.numel()) << l;
    EXPECT_EQ(w.w_up.data_ptr<float>(), w.w_gate.data_ptr<float>() + w.w_gate.numel()) << l;
    EXPECT_TRUE(torch::equal(w.wv, original.wv.to(torch::kFloat32)) && torch::equal(w.w_up, original.w_up.to(torch::kFloat32)))
        << l;
  }
  Transformer stacked(loaded_->config, placed);
  auto c1 = stacked.make_cache(policies::PositionMode::kOriginal);
  auto c2 = model_->make_cache(policies::PositionMode::kOriginal);
  const std::vector<int64_t> ids{1, 403, 407, 261, 378, 432};
  EXPECT_TRUE(torch::equal(stacked.forward(ids, 0, c1, {}, true), model_->forward(ids, 0, c2, {}, true)));
}

TEST_F(Stories260K, LogitsAtGoldenPositionMatch) {
  Golden golden = read_golden();
  auto cache = model_->make_cache(policies::PositionMode::kOriginal);
  std::vector<int64_t> prefix(golden.ids.begin(), golden.ids.begin() + golden.logits_pos + 1);
  torch::Tensor logits = model_->forward(prefix, 0, cache, {}, /*all_logits=*/true);
  for (size_t i = 0; i < golden.logits.size(); ++i)
    EXPECT_NEAR(logits[golden.logits_pos][i].item<double>(), golden.logits[i], 1e-4) << "vocab id " << i;
}

TEST_F(Stories260K, CachedDecodingEqualsRecomputation) {
  std::vector<int64_t> seq{1};
  InferenceSession session(*model_, nullptr, {});
  torch::Tensor cached = session.prefill(seq).squeeze(0);
  double worst = 0;
  for (int step = 0; step < 100; ++step) {
    auto fresh = model_->make_cache(policies::PositionMode::kOriginal);
    torch::Tensor recomputed = model_->forward(seq, 0, fresh, {}, false).squeeze(0);
    worst = std::max(worst, (cached - recomputed).abs().max().item<double>());
    const int64_t next = cached.argmax().item<int64_t>();
    seq.push_back(next);
    cached = session.step(next);
  }
  EXPECT_LE(worst, 1e-4);
}

TEST_F(Stories260K, GqaCacheStoresKvHeadsOnly) {
  EXPECT_EQ(loaded_->config.n_heads, 8);
  EXPECT_EQ(loaded_->config.n_kv_heads, 4);
  InferenceSession session(*model_, nullptr, {});
  session.prefill({1, 403, 407});
  for (int64_t l = 0; l < loaded_->config.n_layers; ++l) {
    EXPECT_EQ(session.cache().layer(l).keys().size(0), 4);
    EXPECT_EQ(session.cache().layer(l).size(), 3);
  }
  EXPECT_EQ(session.cache().logical_bytes(), 5 * 2 * 4 * 3 * 8 * 4);  // layers·{k,v}·heads·len·head_dim·fp32
}

TEST_F(Stories260K, StreamedPrefillEqualsOneForwardUnderFullCache) {
  Tokenizer tok(loaded_->tokenizer_path);
  std::vector<int> ids = tok.encode("Once upon a time, there was a little dog. He liked to run in the sun.", true);
  std::vector<int64_t> tokens(ids.begin(), ids.end());
  InferenceSession whole(*model_, nullptr, {});
  SessionOptions streamed_options;
  streamed_options.protocol = Protocol::kStream;
  streamed_options.block = 3;
  InferenceSession streamed(*model_, nullptr, streamed_options);
  torch::Tensor a = whole.prefill(tokens, true), b = streamed.prefill(tokens, true);
  EXPECT_LE((a - b).abs().max().item<double>(), 1e-4);
}

}  // namespace
}  // namespace kvbench::models
