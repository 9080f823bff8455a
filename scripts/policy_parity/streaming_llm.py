#!/usr/bin/env python3
"""StreamingLLM parity fixture: runs the official StartRecentKVCache (mit-han-lab/streaming-llm,
streaming_llm/kv_cache.py, start_size 4) after every step of a stream (prompt, blocks, decode
steps), as its perplexity evaluation calls it, and records which positions every KV head keeps.

  python3 scripts/policy_parity/streaming_llm.py --reference /path/to/streaming-llm-checkout \
      --out tests/fixtures/policy_parity/streaming_llm.json

The recent size is the kvbench budget less the 4 sinks (kvbench counts sinks inside the budget).
"""
import argparse

import torch

import common


def run_case(mod, name, seed, heads, kv_heads, head_dim, budget, sinks, schedule):
    gen = torch.Generator().manual_seed(seed)
    cache = mod.StartRecentKVCache(start_size=sinks, recent_size=budget - sinks)
    past, steps, pos = None, [], 0
    for phase, T in schedule:
        q, k = common.rand_qk(gen, heads, kv_heads, T, head_dim)
        v = common.position_values(kv_heads, pos, T, head_dim)
        past = [[k, v]] if past is None else [[torch.cat([past[0][0], k], 2), torch.cat([past[0][1], v], 2)]]
        past = cache(past)
        steps.append({"tokens": T, "phase": phase, "compress": True,
                      "layers": [{"q": common.flat(q), "k": common.flat(k), "kept": common.kept_positions(past[0][1]),
                                  "ties": [[] for _ in range(kv_heads)]}]})
        pos += T
    return {"name": name, "seed": seed, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim, "layers": 1,
            "budget": budget, "prompt_len": schedule[0][1], "params": {"sinks": sinks}, "steps": steps}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="checkout of mit-han-lab/streaming-llm")
    ap.add_argument("--commit", default="")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    common.install_stubs()
    mod = common.load_module(a.reference + "/streaming_llm/kv_cache.py", "reference_streaming_kv_cache")
    decode = [("decode", 1)] * 5
    cases = [
        run_case(mod, "mha_prefill_then_decode", 100, 2, 2, 4, 12, 4, [("prefill", 20)] + decode),
        run_case(mod, "gqa_stream_blocks", 200, 4, 2, 4, 10, 4, [("block", 6), ("block", 6), ("block", 7)] + decode),
        run_case(mod, "gqa_two_sinks", 300, 4, 1, 4, 8, 2, [("block", 5), ("block", 9)] + decode),
    ]
    common.write(a.out, "streaming_llm", {}, {"repo": "mit-han-lab/streaming-llm", "commit": a.commit,
                                              "code": "streaming_llm/kv_cache.py StartRecentKVCache.__call__"}, cases)


if __name__ == "__main__":
    main()
