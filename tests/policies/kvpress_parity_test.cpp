// Parity with NVIDIA/kvpress's own presses (docs/policies-kvpress.md): every press and wrapper
// against outputs recorded by running kvpress's classes (scripts/policy_parity/kvpress*.py) on
// fixed tensors, the same positions kept per layer and KV head (tie groups at the selection
// boundary counted apart, tests/policies/parity_fixture.hpp).
#include "parity_fixture.hpp"

namespace kvbench::policies {
namespace {

using parity::json;
using parity::run_fixture;

// One fixture per registry key (scripts/policy_parity/kvpress.py): MHA and GQA, ratios 0.25 to
// 0.75, prompts of 48 to 64 tokens, the prompt compressed once as kvpress's pipeline does.
class KvpressRegistryKey : public ::testing::TestWithParam<std::string> {};

TEST_P(KvpressRegistryKey, KeepsWhatKvpressKeeps) {
  const parity::ParityCount count = run_fixture("kvpress_" + GetParam() + ".json");
  EXPECT_GE(count.cases, 5);
  EXPECT_LE(2 * count.tied, count.selections) << "too many tie groups for the comparison to mean much";
}

INSTANTIATE_TEST_SUITE_P(Kvpress, KvpressRegistryKey,
                         ::testing::Values("knorm", "keydiff", "random", "streaming_llm", "tova", "snapkv",
                                           "observed_attention", "lagkv", "cur", "pyramidkv", "adakv_snapkv", "chunkkv"));

}  // namespace
}  // namespace kvbench::policies
