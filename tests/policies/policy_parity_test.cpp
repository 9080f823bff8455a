// Parity with the official code (tests/policies/parity_fixture.hpp): the policies whose bare
// names follow the reference implementations of their papers.
#include "parity_fixture.hpp"

namespace kvbench::policies {
namespace {

using parity::run_fixture;

// Official SnapKV (MHA and GQA with K/V repeated to the query heads), prompt compressed once,
// then decode steps that only append (to the repeated cache on GQA).
TEST(PolicyParity, SnapKvMatchesFasterDecodingSnapKV) { EXPECT_GE(run_fixture("snapkv.json").cases, 5); }

// KVCache-Factory's PyramidKVCluster, several layers: the reference's integer layer budgets
// (default reference_rounding), its clamped and uniform branches, query_head (gqa repeat) and
// kv_head (gqa reduce with mean/max) granularity.
TEST(PolicyParity, PyramidKvMatchesKVCacheFactory) { EXPECT_GE(run_fixture("pyramidkv.json").cases, 7); }

// FFY0/AdaKV's AdaptiveSnapKVCluster: ragged heads with the reference's per-head rounding, MHA,
// GQA without gqa_support (repeat) and with it (reduce, mean and max), Ada-PyramidKV.
TEST(PolicyParity, AdaKvMatchesFFY0AdaKV) { EXPECT_GE(run_fixture("adakv.json").cases, 7); }

// FMInference/H2O's real-drop cache over prompt, blocks and decode steps (MHA: the reference
// does not run on GQA).
TEST(PolicyParity, H2oMatchesFMInferenceRealDrop) { EXPECT_GE(run_fixture("h2o.json").cases, 3); }

// schwartz-lab-NLP/TOVA's TOVACache over prompt, blocks and decode steps, MHA and GQA.
TEST(PolicyParity, TovaMatchesSchwartzLabTova) { EXPECT_GE(run_fixture("tova.json").cases, 3); }

// mit-han-lab/streaming-llm's StartRecentKVCache after every step of a stream.
TEST(PolicyParity, StreamingLlmMatchesStartRecentKVCache) { EXPECT_GE(run_fixture("streaming_llm.json").cases, 3); }

}  // namespace
}  // namespace kvbench::policies
