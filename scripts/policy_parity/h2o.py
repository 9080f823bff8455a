#!/usr/bin/env python3
"""H2O parity fixture: runs the official real-drop heavy-hitter cache H2OKVCache_LayerWise
(FMInference/H2O, h2o_hf/utils_real_drop/modify_llama.py) over a prompt and then decode steps and
a block, each step handing it the attention weights of the new queries over its own cache (as
H2OLlamaAttention does), and records which positions every head keeps after each step.

  python3 scripts/policy_parity/h2o.py --reference /path/to/H2O-checkout \
      --out tests/fixtures/policy_parity/h2o.json

MHA only: the reference scores per query head and masks the K/V cache with that [heads, n] mask,
which needs as many K/V heads as query heads (it does not run on GQA).
"""
import argparse

import torch

import common


def run_case(mod, name, seed, heads, head_dim, budget, schedule):
    gen = torch.Generator().manual_seed(seed)
    recent = budget // 2  # kvbench recent_ratio 0.5: recent = floor(B/2), heavy hitters = the rest
    cache = mod.H2OKVCache_LayerWise(hh_size=budget - recent, recent_size=recent)
    past = None
    steps, pos = [], 0
    real_topk = torch.topk
    for phase, T in schedule:
        q, k = common.rand_qk(gen, heads, heads, T, head_dim)
        v = common.position_values(heads, pos, T, head_dim)
        keys = k if past is None else torch.cat([past[0], k], dim=2)
        values = v if past is None else torch.cat([past[1], v], dim=2)
        attn = common.causal_attention(q, keys)
        calls = []
        torch.topk = lambda x, k_, **kw: calls.append((x.detach().clone(), k_)) or real_topk(x, k_, **kw)
        try:
            past = cache((keys, values), attn.detach().clone())
        finally:
            torch.topk = real_topk
        ties = [[] for _ in range(heads)]
        if calls:  # tie indices are slots of the cache before eviction: report them as positions
            slot_pos = values[0, :, :, 0]
            for h, t in enumerate(common.boundary_ties(calls[0][0], calls[0][1], eps=1e-5)):
                ties[h] = sorted(int(slot_pos[h, i].item()) for i in t)
        steps.append({"tokens": T, "phase": phase, "compress": True,
                      "layers": [{"q": common.flat(q), "k": common.flat(k), "kept": common.kept_positions(past[1]),
                                  "ties": ties}]})
        pos += T
    return {"name": name, "seed": seed, "heads": heads, "kv_heads": heads, "head_dim": head_dim, "layers": 1,
            "budget": budget, "prompt_len": schedule[0][1],
            "params": {"variant": "real_drop", "recent_ratio": 0.5}, "steps": steps}


def tie_free(mod, name, seed0, *args):
    for seed in range(seed0, seed0 + 300):
        case = run_case(mod, name, seed, *args)
        if not any(t for s in case["steps"] for l in s["layers"] for t in l["ties"]):
            return case
    return case


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="checkout of FMInference/H2O")
    ap.add_argument("--commit", default="")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    common.install_stubs()
    mod = common.load_module(a.reference + "/h2o_hf/utils_real_drop/modify_llama.py", "reference_h2o_real_drop")
    decode = [("decode", 1)] * 6
    cases = [
        tie_free(mod, "prefill_then_decode", 100, 4, 8, 12, [("prefill", 24)] + decode),
        tie_free(mod, "stream_blocks", 200, 2, 8, 10, [("block", 8), ("block", 8), ("block", 4)] + decode[:3]),
        tie_free(mod, "odd_budget", 300, 3, 8, 9, [("prefill", 16)] + decode),
    ]
    common.write(a.out, "h2o", {}, {"repo": "FMInference/H2O", "commit": a.commit,
                                    "code": "h2o_hf/utils_real_drop/modify_llama.py H2OKVCache_LayerWise.__call__"},
                 cases)


if __name__ == "__main__":
    main()
