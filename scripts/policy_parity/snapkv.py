#!/usr/bin/env python3
"""SnapKV parity fixture: runs the official SnapKVCluster (FasterDecoding/SnapKV,
snapkv/monkeypatch/snapkv_utils.py) on fixed random prompts and records what every head keeps.

  python3 scripts/policy_parity/snapkv.py --reference /path/to/SnapKV-checkout \
      --out tests/fixtures/policy_parity/snapkv.json

As the reference's mistral_hijack_4_37.py does, K/V are repeated to the query heads (repeat_kv)
before update_kv, so on GQA every query head keeps its own tokens (kvbench `gqa: repeat`). The
prompt is compressed once; the two decode steps after it only append (the hijack compresses at
prefill only), which exercises the repeated cache's append path in kvbench.
"""
import argparse
import sys

import torch

import common


def run_case(SnapKVCluster, name, seed, heads, kv_heads, head_dim, prompt, budget, window, kernel, pooling):
    gen = torch.Generator().manual_seed(seed)
    q, k = common.rand_qk(gen, heads, kv_heads, prompt, head_dim)
    v = common.position_values(kv_heads, 0, prompt, head_dim)
    groups = heads // kv_heads
    cluster = SnapKVCluster(window_size=window, max_capacity_prompt=budget, kernel_size=kernel,
                            pooling="maxpool" if pooling == "max" else "avgpool")
    calls = []
    real_topk = torch.Tensor.topk
    def spy(self, k_, *a, **kw):
        calls.append((self.detach().clone(), k_))
        return real_topk(self, k_, *a, **kw)
    torch.Tensor.topk = spy
    try:
        k_out, v_out = cluster.update_kv(common.repeat_kv(k, groups), q, common.repeat_kv(v, groups), None, groups)
    finally:
        torch.Tensor.topk = real_topk
    scores, kk = calls[0]
    ties = common.boundary_ties(scores[0], kk, eps=1e-5)
    steps = [{"tokens": prompt, "phase": "prefill", "compress": True,
              "layers": [{"q": common.flat(q), "k": common.flat(k), "kept": common.kept_positions(v_out), "ties": ties}]}]
    kept = common.kept_positions(v_out)
    for t in range(2):  # decode: the hijack appends the repeated new K/V, no compression
        pos = prompt + t
        qd, kd = common.rand_qk(gen, heads, kv_heads, 1, head_dim)
        kept = [sorted(h + [pos]) for h in kept]
        steps.append({"tokens": 1, "phase": "decode", "compress": False,
                      "layers": [{"q": common.flat(qd), "k": common.flat(kd), "kept": kept, "ties": [[] for _ in kept]}]})
    return {"name": name, "seed": seed, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim, "layers": 1,
            "budget": budget, "prompt_len": prompt,
            "params": {"window": window, "kernel": kernel, "pooling": pooling, "gqa": "repeat"},
            "steps": steps}


def tie_free(SnapKVCluster, name, first_seed, heads, kv_heads, head_dim, prompt, budget, *rest):
    """The first (seed, budget near the one asked) whose selections have no boundary ties; max
    pooling spreads each peak over `kernel` tokens, so ties are common."""
    for seed in range(first_seed, first_seed + 300):
        for b in [budget] + [budget + d for d in range(-4, 5) if d]:
            case = run_case(SnapKVCluster, name, seed, heads, kv_heads, head_dim, prompt, b, *rest)
            if not any(t for s in case["steps"] for l in s["layers"] for t in l["ties"]):
                return case
    return case  # ties remain: counted in the fixture and by the test


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="checkout of FasterDecoding/SnapKV")
    ap.add_argument("--commit", default="", help="the checkout's commit, recorded in the fixture")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    common.install_stubs()
    SnapKVCluster = common.load_module(a.reference + "/snapkv/monkeypatch/snapkv_utils.py",
                                       "reference_snapkv_utils").SnapKVCluster
    cases = [
        tie_free(SnapKVCluster, "mha_maxpool", 100, 4, 4, 8, 40, 20, 8, 7, "max"),
        tie_free(SnapKVCluster, "mha_avgpool", 200, 4, 4, 8, 40, 20, 8, 7, "avg"),
        tie_free(SnapKVCluster, "mha_avgpool_k5_w4", 300, 2, 2, 8, 64, 24, 4, 5, "avg"),
        tie_free(SnapKVCluster, "gqa_repeat_maxpool", 400, 4, 2, 8, 40, 20, 8, 7, "max"),
        tie_free(SnapKVCluster, "gqa_repeat_avgpool", 500, 8, 4, 8, 48, 16, 4, 7, "avg"),
    ]
    common.write(a.out, "snapkv", {}, {"repo": "FasterDecoding/SnapKV", "commit": a.commit,
                                       "code": "snapkv/monkeypatch/snapkv_utils.py SnapKVCluster.update_kv"}, cases)


if __name__ == "__main__":
    main()
