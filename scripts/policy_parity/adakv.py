#!/usr/bin/env python3
"""Ada-KV parity fixture: runs the official AdaptiveSnapKVCluster (FFY0/AdaKV,
adaptive_snapkv/monkeypatch/snapkv_utils.py) on fixed random prompts and records what every head
keeps (ragged: each head its own number of tokens).

  python3 scripts/policy_parity/adakv.py --reference /path/to/AdaKV-checkout \
      --out tests/fixtures/policy_parity/adakv.json

GQA: without `gqa_support` (the default) the cluster repeats K/V to the query heads and allocates
over all query heads (kvbench `gqa: repeat`); with `gqa_support` and `gqa_func` it reduces the
query heads' scores per KV head (kvbench `gqa: reduce`, head_reduce = gqa_func). Both are recorded.
"""
import argparse

import torch

import common


def run_case(mod, name, seed, heads, kv_heads, head_dim, layers, prompt, budget, window, kernel, pooling,
             gqa_support=False, gqa_func="mean", alpha=0.2, pyram=False, beta=20):
    gen = torch.Generator().manual_seed(seed)
    groups = heads // kv_heads
    step = {"tokens": prompt, "phase": "prefill", "compress": True, "layers": []}
    for layer in range(layers):
        q, k = common.rand_qk(gen, heads, kv_heads, prompt, head_dim)
        v = common.position_values(kv_heads, 0, prompt, head_dim)
        cluster = mod.AdaptiveSnapKVCluster(window_size=window, kernel_size=kernel,
                                            pooling="maxpool" if pooling == "max" else "avgpool",
                                            base_capacity=budget, floor_alpha=alpha, skip=0, normalize=False,
                                            layer_idx=layer, num_hidden_layers=layers, pyram_mode=pyram,
                                            pyram_beta=beta, gqa_support=gqa_support, num_key_value_groups=groups,
                                            gqa_func=gqa_func)
        scores = []
        real = cluster.calcul_attn_sore
        cluster.calcul_attn_sore = lambda *a: scores.append(real(*a)) or scores[-1]
        flat_topk = []
        real_topk = torch.topk
        torch.topk = lambda x, k=None, **kw: flat_topk.append((x.detach().clone(), k)) or real_topk(x, k=k, **kw)
        try:
            _, v_flat = cluster.update_kv(k, q, v)
        finally:
            torch.topk = real_topk
        lens = cluster.head_lens.tolist()
        kept, off = [], 0
        for n in lens:
            kept.append(sorted(int(round(x)) for x in v_flat[off:off + n, 0].tolist()))
            off += n
        # Ties: among all heads' scores at the allocation boundary (k = heads·b), and in each head
        # at its own capacity.
        sc = scores[0][0]  # [stored heads, prefix]
        alloc = common.boundary_ties(flat_topk[0][0], flat_topk[0][1], eps=1e-5)[0] if flat_topk else []
        ties = []
        for h, n in enumerate(lens):
            t = common.boundary_ties(sc[h:h + 1], n - window, eps=1e-5)[0]
            if alloc and any(i // sc.shape[1] == h for i in alloc):
                t = sorted(set(t) | {i % sc.shape[1] for i in alloc if i // sc.shape[1] == h})
            ties.append(t)
        step["layers"].append({"q": common.flat(q), "k": common.flat(k), "kept": kept, "ties": ties,
                               "allocation_tie": bool(alloc)})
    params = {"window": window, "kernel": kernel, "pooling": pooling, "floor_alpha": alpha,
              "gqa": "reduce" if gqa_support else "repeat", "head_reduce": gqa_func, "pyramid": pyram, "beta": beta}
    return {"name": name, "seed": seed, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim, "layers": layers,
            "budget": budget, "prompt_len": prompt, "params": params, "steps": [step]}


def tie_free(mod, name, seed0, *args, **kw):
    for seed in range(seed0, seed0 + 300):
        case = run_case(mod, name, seed, *args, **kw)
        if not any(t for s in case["steps"] for l in s["layers"] for t in l["ties"]):
            return case
    return case


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="checkout of FFY0/AdaKV")
    ap.add_argument("--commit", default="")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    common.install_stubs()
    mod = common.load_module(a.reference + "/adaptive_snapkv/monkeypatch/snapkv_utils.py", "reference_adakv_utils")
    cases = [
        tie_free(mod, "mha_avgpool", 100, 4, 4, 8, 1, 48, 20, 4, 7, "avg"),
        tie_free(mod, "mha_avgpool_b13", 150, 4, 4, 8, 1, 40, 17, 4, 5, "avg"),
        tie_free(mod, "mha_maxpool", 200, 2, 2, 8, 1, 48, 20, 4, 7, "max"),
        tie_free(mod, "gqa_repeat_avgpool", 300, 4, 2, 8, 1, 48, 20, 4, 7, "avg"),
        tie_free(mod, "gqa_support_mean_avgpool", 400, 4, 2, 8, 1, 48, 20, 4, 7, "avg", gqa_support=True),
        tie_free(mod, "gqa_support_max_avgpool", 500, 8, 2, 8, 1, 48, 20, 4, 7, "avg", gqa_support=True,
                 gqa_func="max"),
        tie_free(mod, "mha_avgpool_pyramid", 600, 2, 2, 8, 3, 48, 20, 4, 7, "avg", pyram=True),
    ]
    common.write(a.out, "adakv", {}, {"repo": "FFY0/AdaKV", "commit": a.commit,
                                      "code": "adaptive_snapkv/monkeypatch/snapkv_utils.py AdaptiveSnapKVCluster.update_kv"},
                 cases)


if __name__ == "__main__":
    main()
