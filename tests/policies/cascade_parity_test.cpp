// Cascade against the official code (jeffwillette/cascading_kv_cache: CascadingKVCache's Triton
// update kernel, interpreted on the CPU, fed by CascadeAttention's eager path): the kept tokens of
// every KV head after each of 260 streamed tokens, |C| = 24 in 4 sub-caches + 4 sinks, MHA and
// GQA. Fixtures: scripts/policy_parity/cascade.py.
#include "streamed_parity.hpp"

namespace kvbench::policies {
namespace {

TEST(CascadeParity, DefaultsKeepWhatTheOfficialCodeKeeps) {
  for (const char* name : {"cascade_mha", "cascade_gqa"}) {
    const nlohmann::json fx = testing::load_parity_fixture(name);
    EXPECT_EQ(fx["near_ties"], 0) << name << ": the fixture has decisions within float noise";
    const testing::ParityReport report = testing::replay_parity(fx);
    EXPECT_EQ(report.steps, 260);
    EXPECT_EQ(report.differing_steps, 0) << name << ": " << report.first_difference;
  }
}

TEST(CascadeParity, OurEarlierDefaultsDifferFromIt) {
  const nlohmann::json fx = testing::load_parity_fixture("cascade_mha");
  EXPECT_GT(testing::replay_parity(fx, {{"eager_fill", false}}).differing_steps, 100);
  EXPECT_GT(testing::replay_parity(fx, {{"gamma_from_window", true}}).differing_steps, 0);
}

}  // namespace
}  // namespace kvbench::policies
