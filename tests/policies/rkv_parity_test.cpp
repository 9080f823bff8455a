// R-KV against its official code (tests/fixtures/policy_parity/rkv.json, recorded by
// scripts/policy_parity/rkv.py from Zefan-Cai/R-KV's R1KV.update_kv, patched attention and
// step-level trigger): per forward the same compressions happen (the policy decides when: compress()
// runs after every forward), every KV head keeps the same positions, and after each compression
// the slots hold them in the same order (R-KV's cache is in score order, which later max pooling
// and redundancy read).
#include "parity_fixture.hpp"

#include <gtest/gtest-spi.h>

namespace kvbench::policies {
namespace {

using parity::json;

constexpr int64_t kNewline = 2, kThinkEnd = 3, kOther = 1;  // the recorder's scripted token ids

// The fixture's settings as the policy's parameters (budget, retain_ratio and the scripted token
// positions are not parameters: the budget is the sequence's, retain_ratio is read only by the
// percent directions run_math.py does not offer).
json policy_params(const json& recorded) {
  json p = recorded;
  for (const char* key : {"budget", "retain_ratio", "newline_positions", "think_end_position"}) p.erase(key);
  p["newline_token_ids"] = {kNewline};
  p["think_end_token_ids"] = {kThinkEnd};
  return p;
}

// The token fed at each position from the prompt on (only the trigger reads it).
std::vector<int64_t> scripted_tokens(const json& c, int64_t length) {
  std::vector<int64_t> tokens(length, kOther);
  for (int64_t p : c["params"].value("newline_positions", std::vector<int64_t>{})) tokens.at(p) = kNewline;
  if (c["params"].contains("think_end_position")) tokens.at(c["params"]["think_end_position"].get<int64_t>()) = kThinkEnd;
  return tokens;
}

std::vector<std::vector<int64_t>> slot_positions(const LayerCache& lc) {
  const torch::Tensor pos = lc.positions().to(torch::kCPU);
  std::vector<std::vector<int64_t>> out;
  for (int64_t h = 0; h < lc.kv_heads(); ++h) {
    const torch::Tensor row = pos[parity::positions_row(lc, h)].contiguous();
    out.emplace_back(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel());
  }
  return out;
}

struct Replay {
  int compressions = 0;
};

Replay replay(const json& c, const json& params, parity::ParityCount& count) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t H = c["heads"], kvh = c["kv_heads"], d = c["head_dim"], L = c["layers"];
  auto policy = make_policy("rkv", params);
  policy->begin(parity::sequence_info(c, L));
  models::ModelConfig config;
  config.head_dim = d;
  config.n_heads = H;
  config.n_kv_heads = kvh;
  const models::Rope rope(config);
  KVCache cache(L, kvh, d, torch::kFloat32, policy->position_mode());
  models::AttentionRequest request;
  request.stats = policy->wants();
  int64_t total = 0;
  for (const json& step : c["steps"]) total += step["tokens"].get<int64_t>();
  const std::vector<int64_t> tokens = scripted_tokens(c, total);

  Replay out;
  int64_t position = 0;
  for (size_t s = 0; s < c["steps"].size(); ++s) {
    const json& step = c["steps"][s];
    SCOPED_TRACE("step " + std::to_string(s));
    const int64_t T = step["tokens"];
    const std::vector<int64_t> fed(tokens.begin() + position, tokens.begin() + position + T);
    const torch::Tensor positions = torch::arange(position, position + T, torch::kInt64);
    for (int64_t l = 0; l < L; ++l) {
      const json& layer = step["layers"][l];
      LayerCache& lc = cache.layer(l);
      const torch::Tensor k = parity::tensor_of(layer["k"], {kvh, T, d});
      append_model_heads(lc, k, positions.to(torch::kFloat32).view({1, T, 1}).expand({kvh, T, d}).contiguous(), positions);
      models::AttentionResult attn = models::attend(parity::tensor_of(layer["q"], {H, T, d}), lc, rope, request);
      attn.stats.tokens = &fed;
      const int64_t before = lc.evictions();
      policy->observe(l, lc, attn.stats, s == 0 ? Phase::kPrefill : Phase::kDecode);
      policy->compress(l, lc, s == 0 ? Phase::kPrefill : Phase::kDecode);
      const bool compressed = lc.evictions() > before;
      EXPECT_EQ(compressed, step["compress"].get<bool>()) << "layer " << l << " at position " << position;
      out.compressions += compressed;
      parity::expect_kept(lc, layer["kept"], layer["ties"], count);
      if (layer.contains("slots"))
        EXPECT_EQ(slot_positions(lc), layer["slots"].get<std::vector<std::vector<int64_t>>>()) << "slot order, layer " << l;
      EXPECT_LE(lc.size(), policy->layer_budget(l));
    }
    position += T;
    ++count.steps;
  }
  ++count.cases;
  return out;
}

TEST(RkvParity, KeepsWhatRkvKeepsInItsSlotOrder) {
  const json fixture = parity::load_fixture("rkv.json");
  parity::ParityCount count;
  int compressions = 0;
  for (const json& c : fixture["cases"]) compressions += replay(c, policy_params(c["params"]), count).compressions;
  parity::report("rkv", fixture, count);
  EXPECT_EQ(count.cases, 9);
  EXPECT_EQ(count.tied, 0);  // the recorder chose seeds without boundary ties
  EXPECT_GE(compressions, 40);
}

// The trigger and the redundancy term each matter on these cases: compressing at other positions,
// or by importance alone, keeps other tokens.
TEST(RkvParity, OtherSettingsKeepOtherTokens) {
  const json fixture = parity::load_fixture("rkv.json");
  const json& c = fixture["cases"][0];
  for (const json& change : {json{{"divide_length", 24}}, json{{"mix_lambda", 1.0}}, json{{"retain_direction", "first"}}}) {
    json p = policy_params(c["params"]);
    p.update(change);
    parity::ParityCount count;
    ::testing::TestPartResultArray failures;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD,
                                                           &failures);
      replay(c, p, count);
    }
    EXPECT_GT(failures.size(), 0) << change.dump() << " kept what the recorded settings keep";
  }
}

TEST(RkvPolicy, RefusesABudgetWithinTheWindowAndAnEvenKernel) {
  auto policy = make_policy("rkv");
  SequenceInfo info;
  info.n_layers = 1;
  info.n_heads = info.n_kv_heads = 2;
  info.head_dim = 4;
  info.budget = 8;
  EXPECT_THROW(policy->begin(info), std::invalid_argument);
  EXPECT_THROW(make_policy("rkv", {{"kernel_size", 4}}), std::invalid_argument);
  EXPECT_THROW(make_policy("rkv", {{"divide_method", "newline"}}), std::invalid_argument);
}

}  // namespace
}  // namespace kvbench::policies
