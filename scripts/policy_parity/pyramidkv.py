#!/usr/bin/env python3
"""PyramidKV parity fixture: runs the official PyramidKVCluster (Zefan-Cai/KVCache-Factory, the
PyramidKV authors' repository, pyramidkv/pyramidkv_utils.py) layer by layer on fixed random
prompts and records what every head of every layer keeps.

  python3 scripts/policy_parity/pyramidkv.py --reference /path/to/KVCache-Factory-checkout \
      --out tests/fixtures/policy_parity/pyramidkv.json

GQA: the repository's default `kv_cache_granularity: query_head` repeats K/V to the query heads
before update_kv (maybe_repeat_kv_before_cache; kvbench `gqa: repeat`); its opt-in `kv_head`
passes the unrepeated K/V and reduces the query heads' scores with `gqa_score_agg`
(kvbench `gqa: reduce` with that head_reduce). Both are recorded.
"""
import argparse
import sys

import torch

import common


def run_case(Cluster, name, seed, heads, kv_heads, head_dim, layers, prompt, budget, window, kernel, pooling,
             granularity, agg="mean", beta=20):
    gen = torch.Generator().manual_seed(seed)
    groups = heads // kv_heads
    step = {"tokens": prompt, "phase": "prefill", "compress": True, "layers": []}
    for layer in range(layers):
        q, k = common.rand_qk(gen, heads, kv_heads, prompt, head_dim)
        v = common.position_values(kv_heads, 0, prompt, head_dim)
        cluster = Cluster(num_hidden_layers=layers, window_size=window, max_capacity_prompt=budget, kernel_size=kernel,
                          pooling="maxpool" if pooling == "max" else "avgpool", beta=beta, layer_idx=layer,
                          gqa_score_agg=agg)
        calls = []
        real_topk = torch.Tensor.topk
        def spy(self, k_, *a, **kw):
            calls.append((self.detach().clone(), k_))
            return real_topk(self, k_, *a, **kw)
        torch.Tensor.topk = spy
        try:
            if granularity == "query_head":
                _, v_out = cluster.update_kv(common.repeat_kv(k, groups), q, common.repeat_kv(v, groups), None, groups)
            else:
                _, v_out = cluster.update_kv(k, q, v, None, groups)
        finally:
            torch.Tensor.topk = real_topk
        ties = common.boundary_ties(calls[0][0][0], calls[0][1], eps=1e-5) if calls else [[] for _ in range(v_out.shape[1])]
        step["layers"].append({"q": common.flat(q), "k": common.flat(k), "kept": common.kept_positions(v_out),
                               "ties": ties})
    params = {"window": window, "kernel": kernel, "pooling": pooling, "beta": beta,
              "gqa": "repeat" if granularity == "query_head" else "reduce", "head_reduce": agg}
    return {"name": name, "seed": seed, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim, "layers": layers,
            "budget": budget, "prompt_len": prompt, "params": params, "steps": [step]}


def tie_free(*args):
    name, seed0 = args[1], args[2]
    for seed in range(seed0, seed0 + 300):
        case = run_case(args[0], name, seed, *args[3:])
        if not any(t for s in case["steps"] for l in s["layers"] for t in l["ties"]):
            return case
    return case


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="checkout of Zefan-Cai/KVCache-Factory")
    ap.add_argument("--commit", default="")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    common.install_stubs()
    C = common.load_module(a.reference + "/pyramidkv/pyramidkv_utils.py", "reference_pyramidkv_utils").PyramidKVCluster
    cases = [
        # 4 layers, C = 20, w = 4: base 16, prompt 48 -> integer steps 32, 22, 12, 2 (sum 68 > 4·16).
        tie_free(C, "mha_avgpool_pyramid", 100, 2, 2, 8, 4, 48, 20, 4, 7, "avg", "query_head"),
        tie_free(C, "mha_maxpool_pyramid", 200, 2, 2, 8, 2, 48, 20, 4, 7, "max", "query_head"),
        # prompt 40 < 2·base + w... max_num clamps to prompt − w (the reference's second branch).
        tie_free(C, "mha_avgpool_clamped", 300, 2, 2, 8, 3, 36, 20, 4, 5, "avg", "query_head"),
        # prompt < 2·base: uniform C − w per layer.
        tie_free(C, "mha_avgpool_uniform", 400, 2, 2, 8, 3, 30, 20, 4, 7, "avg", "query_head"),
        tie_free(C, "gqa_query_head_avgpool", 500, 4, 2, 8, 4, 48, 20, 4, 7, "avg", "query_head"),
        tie_free(C, "gqa_kv_head_mean_avgpool", 600, 4, 2, 8, 4, 48, 20, 4, 7, "avg", "kv_head", "mean"),
        tie_free(C, "gqa_kv_head_max_maxpool", 700, 4, 2, 8, 2, 48, 20, 4, 7, "max", "kv_head", "max"),
    ]
    common.write(a.out, "pyramidkv", {}, {"repo": "Zefan-Cai/KVCache-Factory", "commit": a.commit,
                                          "code": "pyramidkv/pyramidkv_utils.py PyramidKVCluster.update_kv"}, cases)


if __name__ == "__main__":
    main()
