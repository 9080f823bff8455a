// Rolling a session back to a checkpoint (kvpress's compress-once protocol: one compressed
// context, many questions): the cache drops exactly the tokens fed since, so answering again
// gives bit for bit what a fresh prefill of the same context gives; a cache that evicted since
// the checkpoint cannot be rolled back and says so.
#include <gtest/gtest.h>

#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "policies/kv_cache.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

TEST(Rollback, TruncateDropsTheNewestSlotsAndANewAppendStartsWithZeroState) {
  KVCache cache(1, 2, 4, torch::kFloat32);
  LayerCache& layer = cache.layer(0);
  torch::Tensor k = torch::arange(2 * 5 * 4, torch::kFloat32).reshape({2, 5, 4});
  layer.append(k, -k, torch::arange(5, torch::kInt64));
  layer.keep(torch::tensor({{0, 2, 4}}, torch::kInt64));
  layer.state("acc").fill_(3.0f);
  const KVCache::Mark mark = cache.mark();
  layer.append(k.narrow(1, 0, 2), k.narrow(1, 0, 2), torch::tensor({5, 6}, torch::kInt64));
  layer.state("acc").fill_(9.0f);
  cache.rollback(mark);
  ASSERT_EQ(layer.size(), 3);
  EXPECT_TRUE(torch::equal(layer.positions(), torch::tensor({0, 2, 4}, torch::kInt64).expand({2, 3})));
  EXPECT_TRUE(torch::equal(layer.keys(), k.index_select(1, torch::tensor({0, 2, 4}, torch::kInt64))));
  EXPECT_TRUE(torch::equal(layer.arrival_order(), torch::tensor({{0, 1, 2}}, torch::kInt64)));
  layer.append(k.narrow(1, 0, 1), k.narrow(1, 0, 1), torch::tensor({5}, torch::kInt64));
  EXPECT_FLOAT_EQ(layer.state("acc")[0][3].item<float>(), 0.0f);  // the dropped slot's 9 is gone

  const KVCache::Mark before_eviction = cache.mark();
  layer.evict(torch::tensor({{0}}, torch::kInt64));
  try {
    cache.rollback(before_eviction);
    FAIL() << "rolled back over an eviction";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 0 evicted since the mark"), std::string::npos) << e.what();
  }
}

std::vector<int64_t> prompt_of(int64_t n) {
  std::vector<int64_t> p{1};
  for (int64_t i = 1; i < n; ++i) p.push_back(3 + (i * 131) % 500);
  return p;
}

// Feeds `question` then greedily decodes `steps` tokens; returns every logits row.
std::vector<torch::Tensor> answer(models::InferenceSession& session, torch::Tensor logits, const std::vector<int64_t>& question,
                                  int steps) {
  std::vector<torch::Tensor> rows;
  for (int64_t id : question) rows.push_back(logits = session.step(id));
  for (int s = 0; s < steps; ++s) rows.push_back(logits = session.step(logits.argmax().item<int64_t>()));
  return rows;
}

TEST(Rollback, EveryQuestionAfterARollbackEqualsAFreshPrefill) {
  models::LoadedModel loaded = models::load_model("stories260K");
  models::Transformer model(loaded.config, loaded.weights);
  const std::vector<int64_t> context = prompt_of(80);
  const std::vector<std::vector<int64_t>> questions{{42, 17, 99}, {300, 5}, {7}};
  for (const char* name : {"full", "snapkv", "adakv", "knorm"}) {
    models::SessionOptions options;
    options.budget = Budget::tokens(24);
    auto shared_policy = make_policy(name);
    models::InferenceSession shared(model, shared_policy.get(), options);
    const torch::Tensor context_logits = shared.prefill(context).squeeze(0).clone();
    const auto checkpoint = shared.checkpoint();
    for (const auto& q : questions) {
      const std::vector<torch::Tensor> got = answer(shared, context_logits, q, 12);
      shared.rollback(checkpoint);
      EXPECT_EQ(shared.next_position(), static_cast<int64_t>(context.size()));
      auto fresh_policy = make_policy(name);
      models::InferenceSession fresh(model, fresh_policy.get(), options);
      const std::vector<torch::Tensor> want = answer(fresh, fresh.prefill(context).squeeze(0), q, 12);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(torch::equal(got[i], want[i])) << name << " step " << i;
    }
  }
}

TEST(Rollback, ADecodeTimeEvictionCannotBeRolledBack) {
  models::LoadedModel loaded = models::load_model("stories260K");
  models::Transformer model(loaded.config, loaded.weights);
  auto policy = make_policy("h2o");
  models::SessionOptions options;
  options.protocol = models::Protocol::kDecode;
  options.budget = Budget::tokens(24);
  models::InferenceSession session(model, policy.get(), options);
  session.prefill(prompt_of(40));
  const auto checkpoint = session.checkpoint();
  session.step(42);
  EXPECT_THROW(session.rollback(checkpoint), std::logic_error);
}

}  // namespace
}  // namespace kvbench::policies
