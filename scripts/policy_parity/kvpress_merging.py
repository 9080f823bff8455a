#!/usr/bin/python3
"""kvpress parity fixtures of MergingPress (registry keys merging_knorm, merging_snapkv): the
positions each KV head keeps and the values left at them, which MergingPress rewrites (each evicted
token's value folded into its most cosine-similar survivor). kvpress's classes are imported from a
checkout, never copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_merging.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity

Writes kvpress_<key>.json: common.py's layout with each layer's "v" and "kept_values" ([[value of
each kept position, ascending] per KV head]).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from kvpress_critical import TopkSpy, load_presses, module_for  # noqa: E402


def run_merging(press, q, k, v):
    heads, kv_heads, T, d = q.shape[1], k.shape[1], q.shape[2], q.shape[3]
    module = module_for(heads, kv_heads, d)
    hidden = q.transpose(1, 2).reshape(1, T, heads * d)  # q_proj is the identity
    kwargs = {"position_embeddings": (torch.ones(1, T, d), torch.zeros(1, T, d))}
    with TopkSpy() as spy:
        _, merged = press.compress(module, hidden, k.clone(), v.clone(), common.causal_attention(q, k), kwargs)
    # MergingPress.compress: its own scores.topk(n_kept), then the merge and the gather in that order.
    scores, n_kept, indices = spy.calls[-1]
    kept, values = [], []
    for h in range(kv_heads):
        order = indices[0, h].tolist()
        kept.append(sorted(order))
        by_position = sorted(range(len(order)), key=lambda i: order[i])
        values.append([[round(x, 7) for x in merged[0, h, i].tolist()] for i in by_position])
    return kept, values, common.boundary_ties(scores[0], n_kept, eps=1e-5)


def make_case(P, key, spec, seed, heads, kv_heads, T, ratio, threshold, fraction, d=8):
    gen = torch.Generator().manual_seed(seed)
    q, k = common.rand_qk(gen, heads, kv_heads, T, d)
    v = (torch.randn(1, kv_heads, T, d, generator=gen) * 1000).round() / 1000
    press = P("merging_press").MergingPress(press=spec["inner"](P, ratio), similarity_threshold=threshold,
                                            merge_fraction=fraction)
    kept, values, ties = run_merging(press, q, k, v)
    params = dict(spec["params"], similarity_threshold=threshold, merge_fraction=fraction)
    layer = {"q": common.flat(q), "k": common.flat(k), "v": common.flat(v), "kept": kept, "kept_values": values,
             "ties": ties}
    return {"name": f"{key}_h{heads}_kv{kv_heads}_T{T}_r{ratio}_t{threshold}_f{fraction}_s{seed}", "seed": seed,
            "heads": heads, "kv_heads": kv_heads, "head_dim": d, "layers": 1, "prompt_len": T,
            "budget": int(T * (1 - ratio)), "compression_ratio": ratio, "params": params,
            "steps": [{"tokens": T, "phase": "prefill", "compress": True, "layers": [layer]}]}


SPECS = {
    "merging_knorm": {"inner": lambda P, r: P("knorm_press").KnormPress(compression_ratio=r), "params": {}},
    "merging_snapkv": {"inner": lambda P, r: P("snapkv_press").SnapKVPress(compression_ratio=r, window_size=8, kernel_size=5),
                       "params": {"window_size": 8, "kernel_size": 5}},
}
# (heads, kv_heads, tokens, ratio, similarity_threshold, merge_fraction): the defaults (0, 1), a
# threshold that stops some merges, and merge_fraction's quantile gate.
SHAPES = [(4, 4, 48, 0.25, 0.0, 1.0), (4, 2, 64, 0.5, 0.0, 1.0), (8, 2, 56, 0.75, 0.0, 1.0),
          (4, 2, 61, 0.6, 0.3, 1.0), (4, 4, 50, 0.5, 0.0, 0.75), (8, 2, 57, 0.4, 0.1, 0.5)]


def main():
    a = common.recorder_args()
    P = load_presses(a.reference)
    for key, spec in SPECS.items():
        cases = []
        for i, shape in enumerate(SHAPES):
            for seed in range(1000 * (i + 1), 1000 * (i + 1) + 200):  # the first seed without boundary ties
                case = make_case(P, key, spec, seed, *shape)
                if not any(case["steps"][0]["layers"][0]["ties"]):
                    break
            cases.append(case)
        reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_key": key}
        common.write(os.path.join(a.out_dir, f"kvpress_{key}.json"), "kvpress:" + key, spec["params"], reference, cases)


if __name__ == "__main__":
    main()
