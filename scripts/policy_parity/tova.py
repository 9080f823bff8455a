#!/usr/bin/env python3
"""TOVA parity fixture: runs the official TOVACache (schwartz-lab-NLP/TOVA, src/tova_cache.py)
over a prompt, decode steps and blocks: per step the new K/V enter its cache (update) and
reduce() gets the attention weights of the new queries over that cache, as the repository's
patched attention does; records which positions every KV head keeps after each step.

  python3 scripts/policy_parity/tova.py --reference /path/to/TOVA-checkout \
      --out tests/fixtures/policy_parity/tova.json
"""
import argparse

import torch

import common


def run_case(mod, name, seed, heads, kv_heads, head_dim, budget, schedule):
    gen = torch.Generator().manual_seed(seed)
    cache = mod.TOVACache(budget)
    steps, pos = [], 0
    real_topk = torch.topk
    for phase, T in schedule:
        q, k = common.rand_qk(gen, heads, kv_heads, T, head_dim)
        v = common.position_values(kv_heads, pos, T, head_dim)
        keys, values = cache.update(k, v, 0)
        attn = common.causal_attention(q, keys)
        before = values[0, 0, :, 0].clone()
        calls = []
        torch.topk = lambda x, k=None, **kw: calls.append((x.detach().clone(), k)) or real_topk(x, k=k, **kw)
        try:
            cache.reduce(0, attn)
        finally:
            torch.topk = real_topk
        ties = [[] for _ in range(kv_heads)]
        if calls:
            t = common.boundary_ties(calls[0][0], calls[0][1], eps=1e-5)[0]
            ties = [sorted(int(before[i].item()) for i in t)] * kv_heads
        steps.append({"tokens": T, "phase": phase, "compress": True,
                      "layers": [{"q": common.flat(q), "k": common.flat(k),
                                  "kept": common.kept_positions(cache.value_cache[0]), "ties": ties}]})
        pos += T
    return {"name": name, "seed": seed, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim, "layers": 1,
            "budget": budget, "prompt_len": schedule[0][1], "params": {}, "steps": steps}


def tie_free(mod, name, seed0, *args):
    for seed in range(seed0, seed0 + 300):
        case = run_case(mod, name, seed, *args)
        if not any(t for s in case["steps"] for l in s["layers"] for t in l["ties"]):
            return case
    return case


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="checkout of schwartz-lab-NLP/TOVA")
    ap.add_argument("--commit", default="")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    common.install_stubs()
    mod = common.load_module(a.reference + "/src/tova_cache.py", "reference_tova_cache")
    decode = [("decode", 1)] * 6
    cases = [
        tie_free(mod, "mha_prefill_then_decode", 100, 4, 4, 8, 12, [("prefill", 24)] + decode),
        tie_free(mod, "gqa_prefill_then_decode", 200, 8, 2, 8, 10, [("prefill", 20)] + decode),
        tie_free(mod, "gqa_stream_blocks", 300, 4, 2, 8, 10, [("block", 8), ("block", 8), ("block", 5)] + decode[:3]),
    ]
    common.write(a.out, "tova", {}, {"repo": "schwartz-lab-NLP/TOVA", "commit": a.commit,
                                     "code": "src/tova_cache.py TOVACache.reduce"}, cases)


if __name__ == "__main__":
    main()
