// SnapKV (Li et al., "SnapKV: LLM Knows What You are Looking for Before Generation", 2024;
// reference code FasterDecoding/SnapKV snapkv/monkeypatch/snapkv_utils.py, SnapKVCluster): the
// attention of the last `window` = 32 queries (the observation window) is summed per head over
// those queries, max-pooled along the sequence (kernel 7, the repository's LongBench configs;
// `pooling: avg` selectable, as the reference's avgpool) over the tokens before the window, and
// each head keeps its top C − window tokens plus the window. GQA (`gqa`): `repeat` (default) as the
// reference, which repeats K/V to the query heads before compressing (mistral_hijack_4_37.py), so
// every query head keeps its own tokens and the layer stores n_heads heads; `reduce` reduces the
// query heads of a group to their KV head with `head_reduce` (KVCache-Factory's kv_head mode,
// kvpress). The window counts inside the budget; when B ≤ window the layer keeps its last B
// tokens. Under stream/decode the window rows are the queries of the current block/step (one row
// while decoding); the reference compresses the prompt once.
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"

namespace kvbench::policies {
namespace {

const PolicyRegistration registration({
    "snapkv",
    "Observation-window attention, pooled, per-head top-(C − w) + the window",
    "SnapKV (Li et al. 2024; FasterDecoding/SnapKV SnapKVCluster: window 32, kernel 7, maxpool)",
    {{"window", 32}, {"kernel", 7}, {"pooling", "max"}, {"head_reduce", "mean"}, {"gqa", "repeat"}},
    [](const nlohmann::json& p) { return std::make_unique<ScoredPolicy>("snapkv", make_scorer("snapkv", p)); }});

}  // namespace
}  // namespace kvbench::policies
