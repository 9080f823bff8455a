#!/usr/bin/python3
"""CompactorPress parity fixture: runs NVIDIA/kvpress's own CompactorPress
(kvpress/presses/compactor_press.py, with leverage_press.py and non_causal_attention_press.py) on
fixed random queries, keys and values, after torch.manual_seed(seed) (its Gaussian sketch draws
from the global generator, one torch.randn per layer), and records every score and the positions
each KV head keeps (ScorerPress: the n_kept = int(T·(1 − ratio)) best). kvpress's files are
imported from a checkout, never copied.

  mkdir -p /tmp/kvpress_ref && git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_compactor.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out tests/fixtures/policy_parity

The press reads queries and keys BEFORE RoPE from the hidden states (module.q_proj, module.k_proj);
here the hidden states are [q_pre | k_pre] and the projections select each half. The keys it is
given are k_pre rotated at positions 0 … T−1 (transformers' default Llama RoPE, half-split).
Read by tests/policies/kvpress_prompt_parity_test.cpp (KvpressParity.CompactorMatchesKvpress).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import kvpress_expected_attention as ea  # noqa: E402

ALPHA_SAFEGUARD = 0.2
# name, heads, kv_heads, head_dim, T, ratio, sink_start, sink_end, chunk_size, sketch_dimension, blending, AdaKV
CASES = [
    ("compactor_mha_r05", 4, 4, 8, 64, 0.5, 8, 4, 256, 48, None, False),
    ("compactor_gqa42_r025_chunk16", 4, 2, 8, 72, 0.25, 8, 4, 16, 48, None, False),
    ("compactor_gqa82_d16_r075_chunk32", 8, 2, 16, 80, 0.75, 8, 4, 32, 12, None, False),
    ("compactor_gqa42_sinks0_chunk7", 4, 2, 8, 50, 0.5, 0, 0, 7, 6, 0.35, False),
    ("compactor_mha_d16_chunk_exact", 4, 4, 16, 64, 0.5, 4, 2, 20, 48, 1.0, False),
    ("adakv_compactor_mha_r05", 4, 4, 8, 64, 0.5, 8, 4, 256, 48, None, True),
    ("adakv_compactor_gqa42_r075_chunk16", 4, 2, 8, 72, 0.75, 4, 2, 16, 12, None, True),
    ("adakv_compactor_gqa82_sinks0_chunk7", 8, 2, 8, 60, 0.25, 0, 0, 7, 6, 0.5, True),
]


def run_case(P, seed, name, heads, kv_heads, d, T, ratio, s0, s1, chunk, sketch, blending, ada):
    gen = torch.Generator().manual_seed(seed)
    q = (torch.randn(heads, T, d, generator=gen) * 1000).round() / 1000
    k = (torch.randn(kv_heads, T, d, generator=gen) * 1000).round() / 1000
    v = (torch.randn(kv_heads, T, d, generator=gen) * 1000).round() / 1000
    cos, sin = ea.rope_cos_sin(torch.arange(T), d)
    k_rot = ea.rotate(k, cos[0], sin[0])
    module = ea.Module(heads, kv_heads, d)
    hq, hk = heads * d, kv_heads * d
    module.q_proj = torch.nn.Linear(hq + hk, hq, bias=False)
    module.k_proj = torch.nn.Linear(hq + hk, hk, bias=False)
    with torch.no_grad():
        module.q_proj.weight.copy_(torch.cat([torch.eye(hq), torch.zeros(hq, hk)], 1))
        module.k_proj.weight.copy_(torch.cat([torch.zeros(hk, hq), torch.eye(hk)], 1))
    hidden = torch.cat([q.transpose(0, 1).reshape(T, hq), k.transpose(0, 1).reshape(T, hk)], 1).unsqueeze(0)
    kwargs = {"position_embeddings": (cos, sin)}
    press = P("kvpress.presses.compactor_press").CompactorPress(
        compression_ratio=ratio, sink_size_start=s0, sink_size_end=s1, chunk_size=chunk, sketch_dimension=sketch,
        blending=blending)
    n_kept = int(T * (1 - ratio))
    params = {"sink_size_start": s0, "sink_size_end": s1, "chunk_size": chunk, "sketch_dimension": sketch,
              "blending": blending}
    kept, ties = [], []
    if ada:  # AdaKVPress(CompactorPress): the layer's lowest scores masked across heads, a safeguard per head
        ada_press = P("kvpress.presses.adakv_press").AdaKVPress(press, alpha_safeguard=ALPHA_SAFEGUARD)
        params["alpha_safeguard"] = ALPHA_SAFEGUARD
        scored, real_score = [], press.score
        def score_spy(*a, **kw):  # a copy: AdaKVPress raises the safeguarded scores in place
            out = real_score(*a, **kw)
            scored.append(out.clone())
            return out
        press.score = score_spy
        torch.manual_seed(seed)
        with torch.no_grad():
            ada_press.compress(module, hidden, k_rot.unsqueeze(0), v.unsqueeze(0), None, kwargs)
        scores = scored[-1][0]
        kept = common.adakv_kept(module, kv_heads, T)
        # Near-ties (1e-4) at the layer's boundary after the safeguard, and at each head's safeguard boundary.
        n_safe, guarded = common.adakv_guarded(scores, n_kept, ALPHA_SAFEGUARD)
        n_pruned = kv_heads * (T - n_kept)
        flat = torch.sort(guarded.reshape(-1)).values
        lo, hi = flat[n_pruned - 1].item(), flat[n_pruned].item()
        ties = [sorted(i for i in range(T) if lo - 1e-4 <= guarded[h, i].item() <= hi + 1e-4) if hi - lo < 1e-4 else []
                for h in range(kv_heads)]
        for h in range(kv_heads):
            if n_safe > 0:
                s = torch.sort(scores[h], descending=True).values
                # A tie there matters only if the tokens left unguarded could be evicted (not the sinks).
                if (s[n_safe - 1] - s[n_safe]).item() < 1e-4 and s[n_safe].item() <= lo + 1e-4:
                    ties[h] = sorted(set(ties[h]) | {i for i in range(T) if abs(scores[h, i].item() - s[n_safe].item()) < 1e-4})
    else:
        torch.manual_seed(seed)
        with torch.no_grad():
            scores = press.score(module, hidden, k_rot.unsqueeze(0), v.unsqueeze(0), None, kwargs)[0]  # [KV, T]
        for h in range(kv_heads):
            top = scores[h].topk(n_kept).indices
            kept.append(sorted(top.tolist()))
            boundary = scores[h][top].min().item()
            # Scores within 1e-4 of the boundary: kvbench's RoPE inversion and float order may swap them.
            near = [i for i in range(T) if abs(scores[h][i].item() - boundary) < 1e-4]
            ties.append(near if len(near) > 1 else [])
    return {"name": name, "seed": seed, "heads": heads, "kv_heads": kv_heads, "head_dim": d, "layers": 1,
            "prompt_len": T, "rope_theta": ea.THETA, "compression_ratio": ratio, "budget": n_kept,
            "policy": "kvpress:adakv_compactor" if ada else "kvpress:compactor", "params": params, "q": common.flat(q), "k": common.flat(k),
            "v": common.flat(v), "scores": [[round(x, 6) for x in row] for row in scores.tolist()], "kept": kept,
            "ties": ties}


def main():
    a = common.recorder_args()
    P = ea.load_presses(a.reference)
    cases = [run_case(P, 9100 + i, *c) for i, c in enumerate(CASES)]
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_keys": ["compactor", "adakv_compactor"]}
    common.write_cases(os.path.join(a.out_dir, "kvpress_compactor.json"), reference, cases)


if __name__ == "__main__":
    main()
