// RoCo's `easykv` scope against the official EasyKV code (DRSY/EasyKV generate(), encoding_decoding
// mode, kv_policy roco): a 125-token prompt encoded in blocks of 5 under a budget of 60, then 40
// decoding steps; the kept tokens of every KV head after every step, MHA and GQA.
// Fixtures: scripts/policy_parity/roco_easykv.py.
#include "streamed_parity.hpp"

namespace kvbench::policies {
namespace {

TEST(RocoEasyKVParity, DefaultsKeepWhatTheOfficialCodeKeeps) {
  for (const char* name : {"roco_easykv_mha", "roco_easykv_gqa"}) {
    const nlohmann::json fx = testing::load_parity_fixture(name);
    EXPECT_EQ(fx["near_ties"], 0) << name << ": the fixture has decisions within float noise";
    const testing::ParityReport report = testing::replay_parity(fx);
    EXPECT_EQ(report.steps, 65);
    EXPECT_EQ(report.differing_steps, 0) << name << ": " << report.first_difference;
  }
}

TEST(RocoEasyKVParity, TheAlternativesDifferFromIt) {
  const nlohmann::json fx = testing::load_parity_fixture("roco_easykv_mha");
  // Statistics from the first forward on (EasyKV's keep_attention=True), and the paper's scope.
  EXPECT_GT(testing::replay_parity(fx, {{"easykv_keep_attention", true}}).differing_steps, 0);
  EXPECT_GT(testing::replay_parity(fx, {{"scope", "std"}}).differing_steps, 0);
}

}  // namespace
}  // namespace kvbench::policies
