#!/usr/bin/python3
"""kvpress parity fixture of FinchPress (registry key finch): the positions each KV head keeps and
the keys kvpress re-rotates, when FinchPress.compress runs on a layer's prefill whose last w tokens
are the question (the window its embedding hook finds after the delimiter; set here directly).
kvpress reads the eager attention weights (`attentions`), given as the causal softmax of the
RoPE-rotated queries over the rotated keys; module.rotary_emb.inv_freq is transformers' Llama RoPE
at the case's theta. kvpress's classes are imported from a checkout, never copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_finch.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity

Writes kvpress_finch.json: per case the layout, the window w, kvpress's params and compression
ratio, the queries and keys before RoPE ("q" [heads, n, d], "k" [kv_heads, n, d]), the window's
attention rows kvpress read ("rows" [heads, w, n], exact float32), "kept" (per KV head, the
positions kept, ascending) and, with rerotate_keys, the keys kvpress returned ("keys_out"
[kv_heads, n_kept, d]). Cases are drawn until no selection boundary (per head, per chunk) is a tie.
"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from kvpress_critical import TopkSpy, load_presses  # noqa: E402

THETA = 10000.0


def rope(x, inv_freq):
    """transformers' Llama RoPE of x [1, h, n, d] at positions 0..n-1 (half-split layout)."""
    n = x.shape[2]
    freqs = torch.arange(n, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat([freqs, freqs], -1)
    half = x.shape[-1] // 2
    rotated_half = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * emb.cos() + rotated_half * emb.sin()


def exact(t):
    """Nine significant digits: the float32 values exactly, shorter than repr of their doubles."""
    return [float("%.9g" % x) for x in t.reshape(-1).tolist()]


def run_case(P, name, seed, heads, kv_heads, d, n, w, ratio, params):
    gen = torch.Generator().manual_seed(seed)
    q, k = common.rand_qk(gen, heads, kv_heads, n, d)
    inv_freq = 1.0 / (THETA ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    attentions = common.causal_attention(rope(q, inv_freq), rope(k, inv_freq))
    config = types.SimpleNamespace(num_attention_heads=heads, num_key_value_heads=kv_heads)
    module = types.SimpleNamespace(config=config, head_dim=d, layer_idx=0, rotary_emb=types.SimpleNamespace(inv_freq=inv_freq))
    press = P("finch_press").FinchPress(compression_ratio=ratio, **params)
    press.window_size = w
    values = common.position_values(kv_heads, 0, n, d)
    with TopkSpy() as spy:
        keys_out, values_out = press.compress(module, None, rope(k, inv_freq), values, attentions, {})
    # Per KV head, the tie groups at each topk boundary (chunk c's columns start at c·chunk_length).
    ties = [set() for _ in range(kv_heads)]
    for c, (scores, kk, _) in enumerate(spy.calls):
        start = c * params.get("chunk_length", 0)
        for h, group in enumerate(common.boundary_ties(scores[0], kk)):
            ties[h].update(start + j for j in group)
    tied = any(ties)
    case = {"name": name, "seed": seed, "heads": heads, "kv_heads": kv_heads, "head_dim": d, "prompt_len": n, "window": w,
            "rope_theta": THETA, "compression_ratio": ratio, "budget": int(n * (1 - ratio)), "params": params,
            "q": common.flat(q), "k": common.flat(k), "rows": exact(attentions[0, :, n - w:, :]),
            "kept": common.kept_positions(values_out), "ties": [sorted(t) for t in ties]}
    if params.get("rerotate_keys", True) and not tied:
        case["keys_out"] = exact(keys_out)
    return case, tied


def main():
    args = common.recorder_args()
    P = load_presses(args.reference)
    layouts = [  # name, heads, kv_heads, head_dim, n, w, ratio, params
        ("mha4_n48_w6_r0.5", 4, 4, 8, 48, 6, 0.5, {}),
        ("gqa8x2_n64_w8_r0.25", 8, 2, 8, 64, 8, 0.25, {}),
        ("gqa8x2_n72_w12_r0.75", 8, 2, 8, 72, 12, 0.75, {}),
        ("gqa4x2_n41_w3_r0.5", 4, 2, 8, 41, 3, 0.5, {}),
        ("gqa8x2_n64_w8_r0.5_unnormalized", 8, 2, 8, 64, 8, 0.5, {"normalize_scores": False}),
        ("gqa8x2_n60_w6_r0.5_no_rerotation", 8, 2, 8, 60, 6, 0.5, {"rerotate_keys": False}),
        ("gqa8x2_n80_w4_r0.5_chunk16", 8, 2, 8, 80, 4, 0.5, {"chunk_length": 16}),
        ("mha4_n70_w5_r0.25_chunk24", 4, 4, 8, 70, 5, 0.25, {"chunk_length": 24}),
        # The last chunk is the question alone, all at max + 1: it keeps int(6 · 0.25) = 1 of them,
        # kvpress's topk choosing among equal scores (kvbench: the earliest), a tie by construction.
        ("gqa8x2_n66_w6_r0.75_chunk30_no_rerotation", 8, 2, 8, 66, 6, 0.75, {"chunk_length": 30, "rerotate_keys": False}),
    ]
    tied_by_construction = {layouts[-1][0]}
    cases = []
    for i, (name, heads, kv_heads, d, n, w, ratio, params) in enumerate(layouts):
        for seed in range(1000 + 100 * i, 1000 + 100 * i + 50):
            case, tied = run_case(P, name, seed, heads, kv_heads, d, n, w, ratio, params)
            if not tied or name in tied_by_construction:
                cases.append(case)
                break
        else:
            raise SystemExit(f"{name}: no tie-free seed")
    common.write_cases(os.path.join(args.out_dir, "kvpress_finch.json"),
                       {"repo": "NVIDIA/kvpress", "commit": args.commit, "file": "kvpress/presses/finch_press.py",
                        "driver": "scripts/policy_parity/kvpress_finch.py"}, cases)


if __name__ == "__main__":
    main()
