#!/usr/bin/python3
"""kvpress parity fixture of LUKVPress (registry key lukv) around KnormPress: per-(layer, KV head)
budgets from a budget curve [99, layers, kv_heads] of prune ratios. The published curve
(baidu-baige/LU-KV evaluation/curve_data/llama-3.1-8b/ea_0.02_sink4_win1_llama_avg_ratio.npy) is
not reachable from here: a random curve of the same form is written with np.save to
tests/fixtures/policy_parity/kvpress_lukv_curve.npy, set on the press as post_init_from_model sets
it, and kvpress's compress() records the positions each head keeps. requests and cachetools
(imported by the press's file) are stubbed. kvpress's classes are imported from a checkout, never
copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_lukv.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from kvpress_critical import load_presses, module_for  # noqa: E402
from kvpress_duo_attention import stub_imports  # noqa: E402

LAYERS, KV_HEADS, HEADS, D = 2, 4, 8, 8


def main():
    a = common.recorder_args()
    stub_imports()
    P = load_presses(a.reference)
    rng = np.random.default_rng(2602)
    # Prune ratios that rise with the row's compression ratio, spread over the heads.
    base = (np.arange(1, 100) / 100.0)[:, None, None]
    curve = np.clip(base + rng.normal(0, 0.15, size=(99, LAYERS, KV_HEADS)), 0, 1)
    curve_path = os.path.join(a.out_dir, "kvpress_lukv_curve.npy")
    np.save(curve_path, curve)
    curve = np.load(curve_path, allow_pickle=False)
    cases = []
    for i, (T, ratio, sink, window) in enumerate([(40, 0.5, 4, 1), (57, 0.25, 4, 1), (64, 0.75, 2, 8), (33, 0.9, 0, 0),
                                                  (48, 0.375, 4, 1)]):
        for seed in range(500 * (i + 1), 500 * (i + 1) + 100):
            gen = torch.Generator().manual_seed(seed)
            layers, tied = [], False
            for layer in range(LAYERS):
                q, k = common.rand_qk(gen, HEADS, KV_HEADS, T, D)
                press = P("lukv_press").LUKVPress(press=P("knorm_press").KnormPress(), compression_ratio=ratio, sink=sink,
                                                  window=window)
                press._budget_curves = curve  # as post_init_from_model, without the download
                module = module_for(HEADS, KV_HEADS, D, layer, LAYERS)
                module.masked_key_indices = None
                press.compress(module, None, k.clone(), k.clone(), None, {})
                scores = -k[0].norm(dim=-1)
                tied |= any(len(set(scores[h].tolist())) < T for h in range(KV_HEADS))
                pruned = [set() for _ in range(KV_HEADS)]
                if module.masked_key_indices is not None:
                    _, hs, ps = module.masked_key_indices
                    for h, p in zip(hs.tolist(), ps.tolist()):
                        pruned[h].add(p)
                layers.append({"q": common.flat(q), "k": common.flat(k),
                               "kept": [sorted(set(range(T)) - pruned[h]) for h in range(KV_HEADS)]})
            if not tied:
                break
        cases.append({"name": f"lukv_knorm_T{T}_r{ratio}_sink{sink}_win{window}_s{seed}", "seed": seed, "heads": HEADS,
                      "kv_heads": KV_HEADS, "head_dim": D, "layers": LAYERS, "prompt_len": T,
                      "budget": int(T * (1 - ratio)), "compression_ratio": ratio, "values": "positions",
                      "params": {"press": "kvpress:knorm", "sink": sink, "window": window},
                      "steps": [{"tokens": T, "phase": "prefill", "compress": True, "layers": layers}]})
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_key": "lukv", "curve": "kvpress_lukv_curve.npy"}
    common.write(os.path.join(a.out_dir, "kvpress_lukv.json"), "kvpress:lukv", {}, reference, cases)


if __name__ == "__main__":
    main()
