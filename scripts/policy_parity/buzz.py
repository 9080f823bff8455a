#!/usr/bin/env python3
"""Records what the official BUZZ code keeps, for tests/policies/buzz_parity_test.cpp.

Usage: python3 scripts/policy_parity/buzz.py REFERENCE_CHECKOUT [OUT_DIR]
  REFERENCE_CHECKOUT: a checkout of github.com/JunqiZhao888/buzz-llm (tested at e6f5e3e).
  OUT_DIR: default tests/fixtures/policy_parity.
Needs Debian's python3-torch and python3-numpy only.

Drives the reference's BuzzKVCacheWithAccumulation (the class its main_run.py and
eval_long_ppl.py use for "buzz") exactly as its patched attention does: after every forward the
cache [1, heads, n, d] and the forward's softmax [1, heads, T, n] go into __call__, which returns
the cache to keep. The value vectors carry each token's position in their first component, so
the kept positions can be read back per head.
GQA: the reference indexes its KV heads with a mask over query heads, which only works for MHA
(Llama-2-7B); for the GQA fixture it is handed the attention summed over each KV head's group,
what its BuzzKVCacheFast.de_repeat_q sums (kvbench averages: the same argmax, the group is 2).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from streamed_attention import attention, count_changed_steps, git_commit, make_stream, write_fixture  # noqa: E402

PARAMS = {"sinks": 2, "window": 6, "threshold": 20, "stride": 3}
BUDGET = PARAMS["sinks"] + PARAMS["window"] + PARAMS["threshold"]
# A 50-token prompt (one pass samples 42 middle tokens at once), then decoding with two streamed
# blocks in between.
STEPS = [50] + [1] * 40 + [5] + [1] * 40 + [7] + [1] * 30


def run_reference(buzz_class, keys, queries, heads, kv_heads, perturb=None):
    group = heads // kv_heads
    cache = buzz_class(sink_size=PARAMS["sinks"], window_size=PARAMS["window"], stride_size=PARAMS["stride"],
                       k_seq_dim=2, v_seq_dim=2, sample_threshold=PARAMS["threshold"])
    d = keys.size(-1)
    past = None
    kept_per_step = []
    held = [[] for _ in range(kv_heads)]  # positions per KV head, cache order
    start = 0
    for T in STEPS:
        new = list(range(start, start + T))
        start += T
        k_new = keys[new].permute(1, 0, 2).unsqueeze(0)                  # [1, kvh, T, d]
        v_new = torch.zeros(1, kv_heads, T, d)
        v_new[0, :, :, 0] = torch.tensor(new, dtype=torch.float32)
        if past is None:
            past = [k_new, v_new]
        else:
            past = [torch.cat([past[0], k_new], dim=2), torch.cat([past[1], v_new], dim=2)]
        attn = torch.stack([
            attention(queries[new][:, h * group:(h + 1) * group], keys[:, h], held[h], new).sum(0)
            for h in range(kv_heads)])                                    # [kvh, T, n]
        if perturb is not None:
            attn = attn * (1 + perturb * torch.randn(attn.shape, generator=perturb_rng))
        past = cache(past, attn.unsqueeze(0))
        past = [past[0], past[1]]
        held = [[int(p) for p in past[1][0, h, :, 0].tolist()] for h in range(kv_heads)]
        kept_per_step.append(held)
    return kept_per_step


perturb_rng = torch.Generator().manual_seed(99)


def main():
    ref = os.path.abspath(sys.argv[1])
    out = sys.argv[2] if len(sys.argv) > 2 else "tests/fixtures/policy_parity"
    sys.path.insert(0, ref)
    from entry_function.eval_inside_forward.cache.cache_entity_collection import BuzzKVCacheWithAccumulation

    n_tokens = sum(STEPS)
    for name, heads, kv_heads, seed in (("buzz_mha", 4, 4, 12), ("buzz_gqa", 8, 4, 13)):
        keys, queries = make_stream(seed, n_tokens, heads, kv_heads, head_dim=8)
        kept = run_reference(BuzzKVCacheWithAccumulation, keys, queries, heads, kv_heads)
        nudged = run_reference(BuzzKVCacheWithAccumulation, keys, queries, heads, kv_heads, perturb=1e-5)
        ties = count_changed_steps(kept, nudged)
        write_fixture(
            os.path.join(out, name + ".json"),
            reference={"script": __file__, "repo": "JunqiZhao888/buzz-llm", "commit": git_commit(ref),
                       "class": "entry_function/eval_inside_forward/cache/cache_entity_collection.py:"
                                "BuzzKVCacheWithAccumulation"},
            policy="buzz", params=PARAMS, budget=BUDGET, heads=heads, kv_heads=kv_heads, head_dim=8,
            keys=keys, queries=queries, steps=STEPS, kept=kept, near_ties=ties,
            notes="GQA: the reference gets the attention summed over each KV head's query group" if heads != kv_heads
            else "MHA, as the reference's Llama-2-7B")
        print(f"{name}: {len(STEPS)} steps, final sizes {[len(h) for h in kept[-1]]}, near ties {ties}")


if __name__ == "__main__":
    main()
