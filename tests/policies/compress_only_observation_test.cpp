// Policy::observes_only_to_compress: a policy that declares it gets neither statistics nor
// observe() in a forward that does not compress (a decoding step under oneshot), and its results
// are bit for bit those of the same policy observing every forward. The proof runs two turns: the
// second turn's prompt compresses again after the first turn's decoding, so a policy that kept
// anything from a decoding step's observation (H2O's accumulated attention) would differ there.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "budget_probe.hpp"
#include "every_policy.hpp"
#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "models/transformer.hpp"
#include "policies/context_rescoring.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

// CheckedPolicy (forwarding every call) that, with `declare` false, hides the declaration, so the
// runtime observes every forward. Counts observe() calls per phase.
class Observed : public testing::CheckedPolicy {
 public:
  Observed(std::unique_ptr<Policy> inner, bool declare) : CheckedPolicy(std::move(inner)), declare_(declare) {}
  bool observes_only_to_compress() const override { return declare_ && CheckedPolicy::observes_only_to_compress(); }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    ++observations[phase];
    CheckedPolicy::observe(layer, cache, stats, phase);
  }
  std::map<Phase, int64_t> observations;

 private:
  bool declare_;
};

struct TwoTurns {
  std::vector<torch::Tensor> logits;  // every step's, both turns
  std::string refusal;                // a policy that compresses a prompt once refuses the second turn
  std::vector<torch::Tensor> cache;   // each layer's keys, values and positions at the end
  int64_t decode_observations = 0;
};

std::vector<int64_t> turn_tokens(int64_t n, int64_t salt) {
  std::vector<int64_t> t;
  for (int64_t i = 0; i < n; ++i) t.push_back(3 + (i * 131 + salt * 17) % 500);
  return t;
}

// Prompt 96 tokens, 6 greedy steps, a second turn of 20 tokens (compressed again: the budget of 24
// holds 24 + 6 + 20 before it), 6 more steps. ThinK, which prunes key channels and refuses a token
// budget, keeps every token.
TwoTurns two_turns(const models::Transformer& model, const std::string& name, bool declare) {
  Observed policy(make_policy(name, kvbench::testing::runnable_params(name, model.config())), declare);
  models::SessionOptions options;
  options.text = kvbench::testing::stories_text();
  options.budget = kvbench::testing::policy_refuses(name, models::Protocol::kOneShot, true) ? Budget::unlimited() : Budget::tokens(24);
  models::InferenceSession session(model, &policy, options);
  TwoTurns run;
  try {
    std::vector<int64_t> prompt = turn_tokens(95, 1);
    prompt.insert(prompt.begin(), 1);
    torch::Tensor logits = session.prefill(prompt);
    auto decode = [&] {
      for (int s = 0; s < 6; ++s) run.logits.push_back(logits = session.step(logits.reshape({-1}).argmax().item<int64_t>()));
    };
    decode();
    run.logits.push_back(logits = session.extend(turn_tokens(20, 2)));
    decode();
  } catch (const std::invalid_argument& e) {
    run.refusal = e.what();
  }
  for (int64_t l = 0; l < session.cache().n_layers(); ++l) {
    const LayerCache& layer = session.cache().layer(l);
    run.cache.insert(run.cache.end(), {layer.keys().clone(), layer.values().clone(), layer.positions().clone()});
  }
  run.decode_observations = policy.observations[Phase::kDecode];
  return run;
}

TEST(CompressOnlyObservation, DeclaringPoliciesGiveTheResultsOfObservingEveryForward) {
  const models::LoadedModel loaded = models::load_model("stories260K");
  const models::Transformer model(loaded.config, loaded.weights);
  std::set<std::string> declaring;
  for (const auto& info : registered_policies()) {
    if (!make_policy(info.name, kvbench::testing::runnable_params(info.name, model.config()))->observes_only_to_compress()) continue;
    declaring.insert(info.name);
    SCOPED_TRACE(info.name);
    const TwoTurns skipped = two_turns(model, info.name, true), observed = two_turns(model, info.name, false);
    EXPECT_EQ(skipped.refusal, observed.refusal);
    ASSERT_EQ(skipped.logits.size(), observed.logits.size());
    for (size_t i = 0; i < skipped.logits.size(); ++i) EXPECT_TRUE(torch::equal(skipped.logits[i], observed.logits[i])) << "step " << i;
    ASSERT_EQ(skipped.cache.size(), observed.cache.size());
    for (size_t i = 0; i < skipped.cache.size(); ++i)
      EXPECT_TRUE(skipped.cache[i].sizes() == observed.cache[i].sizes() && torch::equal(skipped.cache[i], observed.cache[i]))
          << "cache tensor " << i;
    EXPECT_EQ(skipped.decode_observations, 0);
    EXPECT_GT(observed.decode_observations, 0);
  }
  // The one-shot policies the performance issue names decode on the fused kernel.
  for (const char* name : {"snapkv", "pyramidkv", "adakv", "tova", "expected_attention", "kvpress:expected_attention", "kvpress:snapkv", "kvpress:pyramidkv",
                           "kvpress:tova", "kvpress:observed_attention", "kvpress:chunkkv"})
    EXPECT_TRUE(declaring.count(name)) << name << " observes decoding steps it never compresses after";
  // Accumulating policies must not declare: their compression reads every forward's attention.
  for (const char* name : {"h2o", "scissorhands", "kvpress:critical_snapkv", "kvpress:decoding"})
    EXPECT_FALSE(declaring.count(name)) << name;
}

class EmptyRescoring : public ContextRescoring {
 public:
  std::vector<std::vector<int64_t>> scoring_inputs(const std::vector<int64_t>&, const PromptText*) override { return {}; }
  void begin_scoring_input(size_t) override {}
};

class DeclaringRescorer : public Policy {
 public:
  std::string name() const override { return "declaring_rescorer"; }
  bool observes_only_to_compress() const override { return true; }
  void compress(int64_t, LayerCache&, Phase) override {}
  ContextRescoring* rescoring() override { return &rescoring_; }

 private:
  EmptyRescoring rescoring_;
};

TEST(CompressOnlyObservation, ARescoringPolicyCannotDeclareIt) {
  const models::LoadedModel loaded = models::load_model("stories260K");
  const models::Transformer model(loaded.config, loaded.weights);
  DeclaringRescorer policy;
  try {
    models::InferenceSession session(model, &policy, {});
    FAIL() << "a rescoring policy skipped observations";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("declaring_rescorer: a rescoring policy"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvbench::policies
