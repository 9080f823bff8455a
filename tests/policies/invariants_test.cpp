// Invariants every registered policy must satisfy on the real model:
//  1. after any compress() no layer/head holds more than its budget (property test over random
//     budgets, prompt lengths, block sizes and protocols);
//  2. with a budget at least the sequence length, the logits are exactly Full's.
#include <gtest/gtest.h>

#include <random>

#include "models/model_loader.hpp"
#include "models/transformer.hpp"
#include "models/inference_session.hpp"
#include "policies/registry.hpp"
#include "budget_probe.hpp"
#include "every_policy.hpp"

namespace kvbench::policies {
namespace {

using testing::CheckedPolicy;  // forwards every call and checks the budget after each compress()

class PolicyInvariants : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new models::LoadedModel(models::load_model("stories260K"));
    model_ = new models::Transformer(loaded_->config, loaded_->weights);
  }
  static std::vector<int64_t> tokens(int64_t n, std::mt19937_64& rng) {
    std::vector<int64_t> t{1};
    for (int64_t i = 1; i < n; ++i) t.push_back(3 + static_cast<int64_t>(rng() % 500));
    return t;
  }
  static models::LoadedModel* loaded_;
  static models::Transformer* model_;
};
models::LoadedModel* PolicyInvariants::loaded_ = nullptr;
models::Transformer* PolicyInvariants::model_ = nullptr;

TEST_F(PolicyInvariants, NoHeadEverExceedsItsBudget) {
  std::mt19937_64 rng(20261123);
  for (const auto& info : registered_policies()) {
    if (info.name == "full") continue;
    for (int trial = 0; trial < 6; ++trial) {
      const int64_t length = 20 + static_cast<int64_t>(rng() % 90);
      const int64_t budget = 8 + static_cast<int64_t>(rng() % 40);
      const models::Protocol protocol = static_cast<models::Protocol>(rng() % 3);
      models::SessionOptions options;
      options.text = kvbench::testing::stories_text();
      options.protocol = protocol;
      options.block = 1 + static_cast<int64_t>(rng() % 9);
      options.budget = trial % 2 ? Budget::tokens(budget) : Budget::fraction(0.3 + 0.1 * (trial % 3));
      options.seed = trial;
      CheckedPolicy checker(make_policy(info.name, kvbench::testing::runnable_params(info.name, model_->config())));
      models::InferenceSession session(*model_, &checker, options);
      if (kvbench::testing::prefill_only(info.name) && protocol != models::Protocol::kOneShot) continue;
      if (kvbench::testing::policy_refuses(info.name, protocol, true)) {
        EXPECT_THROW(session.prefill(tokens(length, rng)), std::invalid_argument) << info.name;
        continue;
      }
      torch::Tensor logits = session.prefill(tokens(length, rng));
      for (int step = 0; step < 6; ++step) logits = session.step(logits.reshape({-1}).argmax().item<int64_t>());
      SCOPED_TRACE(info.name + " protocol " + models::to_string(protocol) + " block " + std::to_string(options.block) +
                   " budget " + options.budget.to_string() + " length " + std::to_string(length));
      EXPECT_GT(checker.compressions, 0);
      EXPECT_TRUE(checker.violations.empty()) << checker.violations.front();
    }
  }
}

TEST_F(PolicyInvariants, BudgetAtLeastTheSequenceGivesFullLogits) {
  std::mt19937_64 rng(7);
  const std::vector<int64_t> prompt = tokens(60, rng);
  for (const auto& info : registered_policies()) {
    for (models::Protocol protocol : {models::Protocol::kOneShot, models::Protocol::kStream, models::Protocol::kDecode}) {
      models::SessionOptions options;
      options.text = kvbench::testing::stories_text();
      options.protocol = protocol;
      options.block = 5;
      models::InferenceSession full(*model_, nullptr, options);
      options.budget = Budget::tokens(1000);
      auto policy = make_policy(info.name, kvbench::testing::runnable_params(info.name, model_->config()));
      models::InferenceSession evicting(*model_, policy.get(), options);
      if (kvbench::testing::prefill_only(info.name) && protocol != models::Protocol::kOneShot) continue;
      if (kvbench::testing::policy_refuses(info.name, protocol, true)) {
        EXPECT_THROW(evicting.prefill(prompt, true), std::invalid_argument) << info.name;
        continue;
      }
      torch::Tensor a = full.prefill(prompt, true), b = evicting.prefill(prompt, true);
      double worst = (a - b).abs().max().item<double>();
      for (int step = 0; step < 15; ++step) {
        const int64_t next = a.reshape({-1, a.size(-1)})[-1].argmax().item<int64_t>();
        a = full.step(next);
        b = evicting.step(next);
        worst = std::max(worst, (a - b).abs().max().item<double>());
      }
      EXPECT_LE(worst, 1e-4) << info.name << " under " << models::to_string(protocol);
    }
  }
}

// Every bad parameter is one message naming the policy, the parameter and what it must be.
TEST(PolicyParameters, ErrorsNameThePolicyAndWhatTheValueMustBe) {
  auto error_of = [](const std::string& policy, const nlohmann::json& params) -> std::string {
    try {
      make_policy(policy, params);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(error_of("snapkv", {{"window", 2.5}}),
            "policy_params: field 'window' of policy 'snapkv' must be an integer >= 1, got 2.5");
  EXPECT_EQ(error_of("buzz", {{"local_max", 2}}), "policy_params: field 'local_max' of policy 'buzz' must be true or false, got 2");
  EXPECT_EQ(error_of("h2o", {{"head_reduce", 2}}),
            "policy_params: field 'head_reduce' of policy 'h2o' must be one of mean, max, sum, got 2");
  // A shared declaration (head_reduce, gqa) is checked by the registry, which names the policy.
  EXPECT_EQ(error_of("h2o", {{"head_reduce", "foo"}}),
            "policy_params: field 'head_reduce' of policy 'h2o' must be one of mean, max, sum, got \"foo\"");
  EXPECT_EQ(error_of("pyramidkv", {{"gqa", "x"}}).rfind("policy_params: field 'gqa' of policy 'pyramidkv' must be one of", 0), 0u);
  EXPECT_EQ(error_of("snapkv", {{"windoe", 4}}).rfind("policy_params: field 'windoe' is not a parameter of policy 'snapkv' "
                                                       "(valid: gqa, head_reduce, kernel, pooling, window)", 0), 0u);
  // A wrapper takes the parameters of the scorer it wraps, and only those.
  EXPECT_EQ(error_of("adakv", {{"scorer", "h2o"}, {"window", 4}}).rfind("policy_params: field 'window' is not a parameter", 0), 0u);
  EXPECT_EQ(error_of("adakv", {{"scorer", "h2o"}, {"recent_ratio", 0.25}}), "(no error)");
  EXPECT_EQ(error_of("adakv", {{"scorer", "nope"}}).rfind("policy_params: field 'scorer' of policy 'adakv' must be a registered scorer", 0), 0u);
  // Checked whichever option reads them: alpha and beta under phi log, epsilon under the lazy greedy.
  EXPECT_EQ(error_of("bumblebee", {{"alpha", -1000.0}}).rfind("bumblebee: alpha and beta must be finite and > 0", 0), 0u);
  EXPECT_EQ(error_of("bumblebee", {{"epsilon", -5.0}}), "bumblebee: epsilon must be in (0, 1)");
  // A message that already names its policy is not named twice.
  EXPECT_EQ(error_of("kvec", {{"window", 40}, {"wide_window", 32}}), "kvec: need window <= wide_window");
  // A range is the declaration's: the message says the bound.
  EXPECT_EQ(error_of("kvec", {{"beta", -1}}), "policy_params: field 'beta' of policy 'kvec' must be a number >= 0 and <= 1, got -1");
}

}  // namespace
}  // namespace kvbench::policies
