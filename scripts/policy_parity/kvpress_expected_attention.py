#!/usr/bin/python3
"""ExpectedAttentionPress parity fixture: runs NVIDIA/kvpress's own ExpectedAttentionPress
(kvpress/presses/expected_attention_press.py), alone and under AdaKVPress (the registry's
"expected_attention" = AdaKVPress(ExpectedAttentionPress(epsilon=1e-2))), on fixed random queries,
keys and values, and records the positions every KV head keeps. kvpress's files are imported from
a checkout (a package stand-in without its __init__, which imports the pipeline), never copied.

  mkdir -p /tmp/kvpress_ea && git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ea
  /usr/bin/python3 scripts/policy_parity/kvpress_expected_attention.py --reference /tmp/kvpress_ea \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 \
      --out tests/fixtures/policy_parity/kvpress_expected_attention.json

The press reads the queries BEFORE RoPE (module.q_proj of the hidden states; here q_proj is the
identity and the hidden states are q_pre laid out [1, T, H·d]) and the rotary embedding at the
future positions T … T+n_future−1 (module.rotary_emb: transformers' default Llama RoPE, half-split
layout, float32). The keys it is given are k_pre rotated at positions 0 … T−1 the same way. Each
case stores q and k before RoPE and the values (random, their norms matter). Read by
tests/policies/kvpress_parity_test.cpp (KvpressParity.ExpectedAttentionMatchesKvpress).
Needs only Debian's python3-torch (transformers is stubbed: repeat_kv copies each KV head
consecutively, as transformers' does).
"""
import argparse
import importlib
import json
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import reference_stubs  # noqa: E402

THETA = 10000

# name, heads, kv_heads, head_dim, T, ratio, n_future, n_sink, use_covariance, use_vnorm, epsilon, AdaKV
CASES = [
    ("ea_mha_f16_s4", 4, 4, 8, 48, 0.5, 16, 4, True, True, 0.0, False),
    ("ea_gqa42_f512_s4", 4, 2, 8, 60, 0.25, 512, 4, True, True, 0.0, False),
    ("ea_gqa82_d16_s2", 8, 2, 16, 56, 0.75, 512, 2, True, True, 0.0, False),
    ("ea_gqa42_nocov", 4, 2, 8, 50, 0.5, 512, 4, False, True, 0.0, False),
    ("ea_mha_d16_novnorm_s0", 4, 4, 16, 72, 0.5, 16, 0, True, False, 0.0, False),
    ("ea_gqa82_nocov_novnorm_s0", 8, 2, 8, 90, 0.75, 16, 0, False, False, 0.0, False),
    ("ea_mha_eps", 4, 4, 8, 64, 0.25, 512, 4, True, True, 0.01, False),
    ("ea_gqa42_d16_nocov_eps", 4, 2, 16, 41, 0.5, 16, 4, False, True, 0.01, False),
    ("ea_mha_r075_s0", 4, 4, 8, 40, 0.75, 512, 0, True, True, 0.0, False),
    ("adakv_ea_gqa42", 4, 2, 8, 60, 0.5, 512, 4, True, True, 0.01, True),
    ("adakv_ea_gqa82_d16_f16", 8, 2, 16, 64, 0.75, 16, 4, True, True, 0.01, True),
    ("adakv_ea_mha_nocov_s0", 4, 4, 8, 48, 0.25, 512, 0, False, True, 0.01, True),
]
ALPHA_SAFEGUARD = 0.2


def load_presses(root):
    reference_stubs.install_transformers_stub()  # repeat_kv: each KV head's copies consecutive
    common.install_stubs()  # any other transformers.* name (gemma3, phi3, qwen3, ...): placeholders
    for name, path in (("kvpress", root + "/kvpress"), ("kvpress.presses", root + "/kvpress/presses")):
        package = types.ModuleType(name)
        package.__path__ = [path]
        sys.modules[name] = package
    return lambda module: importlib.import_module(module)


def rope_cos_sin(position_ids, d, theta=THETA):
    """transformers' LlamaRotaryEmbedding (default rope_type, attention_scaling 1): float32
    (cos, sin) [1, len, d]."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = position_ids.float().reshape(-1, 1) * inv_freq.reshape(1, -1)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().unsqueeze(0), emb.sin().unsqueeze(0)


def rotate(x, cos, sin):
    """x [..., len, d] rotated HF-style (x·cos + rotate_half(x)·sin); cos, sin [len, d]."""
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


class Module:
    """The attention layer as the press sees it: config, head_dim, layer_idx, an identity q_proj
    and rotary_emb. No qkv_proj, q_norm, k_proj: get_prerope_query_states takes the Llama path."""

    def __init__(self, heads, kv_heads, d):
        self.config = types.SimpleNamespace(num_attention_heads=heads, num_key_value_heads=kv_heads,
                                            _attn_implementation="sdpa", head_dim=d)
        self.head_dim, self.layer_idx = d, 0
        self.q_proj = torch.nn.Linear(heads * d, heads * d, bias=False)
        with torch.no_grad():
            self.q_proj.weight.copy_(torch.eye(heads * d))
        self.rotary_emb = lambda x, position_ids: tuple(t.to(x.dtype) for t in rope_cos_sin(position_ids[0], d))


def check_rope(P):
    """The stand-in is the formula, element by element, and the keys' rotation is the matrix
    kvpress builds in apply_avg_rope (so rotating the keys and averaging R agree)."""
    for d in (8, 16):
        pos = torch.arange(0, 700)
        cos, sin = rope_cos_sin(pos, d)
        assert cos.shape == (1, 700, d) and cos.dtype == torch.float32
        inv = torch.tensor([1.0 / THETA ** (i / d) for i in range(0, d, 2)], dtype=torch.float64)
        ang = pos.double().unsqueeze(1) * inv.unsqueeze(0)
        ang = torch.cat((ang, ang), 1)
        assert torch.allclose(cos[0].double(), ang.cos(), atol=2e-4, rtol=0), "RoPE cos"
        assert torch.allclose(sin[0].double(), ang.sin(), atol=2e-4, rtol=0), "RoPE sin"
        module = Module(1, 1, d)
        EA = P("kvpress.presses.expected_attention_press").ExpectedAttentionPress
        for p in (0, 1, 37, 600):
            press = EA(n_future_positions=1)
            rows, _ = press.apply_avg_rope(module, torch.eye(d), None, p)  # row i: (R(p)·e_i)ᵀ
            c, s = rope_cos_sin(torch.tensor([p]), d)
            want = rotate(torch.eye(d), c[0], s[0])
            assert torch.allclose(rows, want, atol=1e-6), f"R(p={p}) vs HF rotation, d={d}"
    print("RoPE stand-in: equals inv_freq = 1/theta^(arange(0,d,2)/d), cat(freqs, freqs); "
          "kvpress's R(p) equals the HF half-split rotation")


def run_case(P, seed, name, heads, kv_heads, d, T, ratio, future, sink, cov, vnorm, eps, ada):
    gen = torch.Generator().manual_seed(seed)
    # Queries with a per-head offset, so the mean term μ̄·k/√d weighs as much as the covariance term.
    q = torch.randn(heads, T, d, generator=gen) + torch.randn(heads, 1, d, generator=gen)
    k = torch.randn(kv_heads, T, d, generator=gen)
    v = torch.randn(kv_heads, T, d, generator=gen)
    q, k, v = ((x * 1000).round() / 1000 for x in (q, k, v))

    module = Module(heads, kv_heads, d)
    hidden = q.transpose(0, 1).reshape(1, T, heads * d)
    utils = P("kvpress.utils")
    assert not any(hasattr(module, a) for a in ("qkv_proj", "q_norm", "k_proj"))
    assert torch.equal(utils.get_prerope_query_states(module, hidden)[0], q), "q_proj must give q_pre exactly"
    cos, sin = rope_cos_sin(torch.arange(T), d)
    keys = rotate(k, cos[0], sin[0]).unsqueeze(0)
    values = v.clone().unsqueeze(0)

    ea = P("kvpress.presses.expected_attention_press").ExpectedAttentionPress(
        compression_ratio=ratio, n_future_positions=future, n_sink=sink, use_covariance=cov, use_vnorm=vnorm,
        epsilon=eps)
    params = {"n_future_positions": future, "n_sink": sink, "use_covariance": cov, "use_vnorm": vnorm,
              "epsilon": eps}
    scored = []
    real_score = ea.score

    def score_spy(*a, **kw):
        s = real_score(*a, **kw)
        scored.append(s.detach().clone())
        return s
    ea.score = score_spy

    n_kept = int(T * (1 - ratio))
    calls, real_topk = [], torch.Tensor.topk

    def topk_spy(t, kk, *a, **kw):
        out = real_topk(t, kk, *a, **kw)
        calls.append((t.detach().clone(), kk, out.indices.clone()))
        return out
    if ada:
        press = P("kvpress.presses.adakv_press").AdaKVPress(ea, alpha_safeguard=ALPHA_SAFEGUARD)
        params["alpha_safeguard"] = ALPHA_SAFEGUARD
        press.compress(module, hidden, keys, values, None, {})
        kept = common.adakv_kept(module, kv_heads, T)
        scores = scored[-1][0]  # [kv_heads, T], before the safeguard
        # Ties: at each head's safeguard boundary (int(n_kept·alpha) best), and at the layer's
        # boundary among the flattened scores after the safeguard (the n_pruned lowest evicted).
        n_safe, guarded = common.adakv_guarded(scores, n_kept, ALPHA_SAFEGUARD)
        n_pruned = kv_heads * (T - n_kept)
        flat_sorted = torch.sort(guarded.reshape(-1)).values
        gap = (flat_sorted[n_pruned] - flat_sorted[n_pruned - 1]).item()
        ties = [set() for _ in range(kv_heads)]
        for i in common.boundary_ties((-guarded.reshape(1, -1)), n_pruned, eps=1e-5)[0]:
            ties[i // T].add(i % T)
        # A tie at a head's safeguard boundary matters only if the tied tokens left unguarded could
        # be evicted (not so for the n_sink sinks, all scored max+1, when n_safe < n_sink).
        threshold = flat_sorted[n_pruned - 1].item()
        for h, t in enumerate(common.boundary_ties(scores, n_safe, eps=1e-5) if n_safe > 0 else []):
            if t and scores[h, t[0]].item() <= threshold + 1e-5:
                ties[h].update(t)
        ties = [sorted(t) for t in ties]
        assert sum(len(x) for x in kept) == kv_heads * n_kept
    else:
        torch.Tensor.topk = topk_spy
        try:
            out_k, out_v = ea.compress(module, hidden, keys, values, None, {})
        finally:
            torch.Tensor.topk = real_topk
        scores, kk, indices = calls[-1]
        assert kk == n_kept and torch.equal(scores, scored[-1])
        scores = scores[0]
        kept = [sorted(indices[0, h].tolist()) for h in range(kv_heads)]
        ties = common.boundary_ties(scores, n_kept, eps=1e-5)
        s = torch.sort(scores, dim=-1, descending=True).values
        gap = (s[:, n_kept - 1] - s[:, n_kept]).min().item()
        assert out_k.shape[2] == n_kept and out_v.shape[2] == n_kept
        if sink:
            assert all(set(range(sink)) <= set(h) for h in kept), "sinks are kept"
    case = {"name": name, "policy": "kvpress:expected_attention" if ada else "expected_attention", "seed": seed,
            "heads": heads, "kv_heads": kv_heads, "head_dim": d, "prompt_len": T, "rope_theta": THETA,
            "compression_ratio": ratio, "budget": n_kept, "params": params,
            "q": common.flat(q), "k": common.flat(k), "v": common.flat(v), "kept": kept, "ties": ties}
    return case, gap


def tie_free(P, first_seed, *spec):
    """The first seed whose selection boundaries hold no tie (within 1e-5) and whose smallest
    boundary gap is at least 1e-4 (well above float32 noise)."""
    for seed in range(first_seed, first_seed + 300):
        case, gap = run_case(P, seed, *spec)
        if not any(case["ties"]) and gap >= 1e-4:
            return case, gap
    return case, gap


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="checkout of NVIDIA/kvpress")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.set_num_threads(1)
    P = load_presses(os.path.abspath(a.reference))
    check_rope(P)
    cases = []
    for i, spec in enumerate(CASES):
        case, gap = tie_free(P, 100 * (i + 1), *spec)
        cases.append(case)
        p = case["params"]
        print(f"  {case['name']:28s} {case['policy']:27s} seed {case['seed']:5d} H{case['heads']}/KV{case['kv_heads']} "
              f"d{case['head_dim']:<2d} T{case['prompt_len']:<3d} r{case['compression_ratio']:<5} "
              f"budget {case['budget']:3d} F{p['n_future_positions']:<4d} sink {p['n_sink']} cov {int(p['use_covariance'])} "
              f"vnorm {int(p['use_vnorm'])} eps {p['epsilon']:<5} kept {[len(x) for x in case['kept']]} "
              f"ties {sum(1 for t in case['ties'] if t)} min gap {gap:.2e}")
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "file": "kvpress/presses/expected_attention_press.py"}
    with open(a.out, "w") as f:
        json.dump({"reference": reference, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    tied = sum(1 for c in cases for t in c["ties"] if t)
    print(f"{a.out}: {len(cases)} cases ({sum(c['policy'] != 'expected_attention' for c in cases)} AdaKV), "
          f"{sum(c['kv_heads'] for c in cases)} head selections, {tied} with boundary ties")


if __name__ == "__main__":
    main()
