// BUZZ against the official code (JunqiZhao888/buzz-llm, BuzzKVCacheWithAccumulation): the kept
// tokens of every KV head after every step of a 172-token stream (a 50-token prompt, decoding, two
// streamed blocks), MHA and GQA. Fixtures: scripts/policy_parity/buzz.py.
#include "streamed_parity.hpp"

namespace kvbench::policies {
namespace {

TEST(BuzzParity, DefaultsKeepWhatTheOfficialCodeKeeps) {
  for (const char* name : {"buzz_mha", "buzz_gqa"}) {
    const nlohmann::json fx = testing::load_parity_fixture(name);
    EXPECT_EQ(fx["near_ties"], 0) << name << ": the fixture has decisions within float noise";
    const testing::ParityReport report = testing::replay_parity(fx);
    EXPECT_EQ(report.steps, 113);
    EXPECT_EQ(report.differing_steps, 0) << name << ": " << report.first_difference;
  }
}

TEST(BuzzParity, OurEarlierReadingsDifferFromIt) {
  const nlohmann::json fx = testing::load_parity_fixture("buzz_mha");
  // Evicting when old + new reach T (not exceed it), and sampling the prompt chunk by chunk.
  EXPECT_GT(testing::replay_parity(fx, {{"trigger", "reaches"}}).differing_steps, 50);
  EXPECT_GT(testing::replay_parity(fx, {{"new_tokens", "chunked"}}).differing_steps, 0);
}

}  // namespace
}  // namespace kvbench::policies
