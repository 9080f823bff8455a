#!/usr/bin/env python3
"""kvpress parity fixtures: runs NVIDIA/kvpress's own presses (imported from a checkout, never
copied here) on fixed random prompts and records, per layer and KV head, the positions each press
keeps; one fixture per PRESS_REGISTRY key, tests/fixtures/policy_parity/kvpress_<key>.json, read
by tests/policies/kvpress_parity_test.cpp (format: common.py's docstring).

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress
  /usr/bin/python3 scripts/policy_parity/kvpress.py --reference /tmp/kvpress \
      --commit <sha> [--out-dir tests/fixtures/policy_parity] [--only knorm,tova]

(Debian's python3-torch 1.13, the version of the libtorch kvbench links, hence /usr/bin/python3;
no transformers: common.install_stubs() stands in for it, with transformers' repeat_kv and
rotate_half.)

How a press is driven, as kvpress's BasePress.forward_hook does at the context prefill: the
layer's whole prompt is in the cache and `press.compress(module, hidden_states, keys, values,
attentions, kwargs)` runs once; what it returns is the layer's cache from then on. Each case then
appends two decode tokens without compressing (kvpress compresses only while prefilling).

  module         a stand-in with .config.num_attention_heads / num_key_value_heads /
                 num_hidden_layers / _attn_implementation, .head_dim, .layer_idx and q_proj = the
                 identity
  hidden_states  the queries laid out as [1, T, H*d]: with q_proj the identity and the
                 position embeddings cos = 1, sin = 0, kvpress's own window attention
                 (SnapKVPress.compute_window_attention, used where `attentions` is None) sees
                 exactly the case's queries
  attentions     common.causal_attention(q, k) [1, H, T, T] for the presses that read the eager
                 attention weights (snapkv, pyramidkv, tova, observed_attention); None for the
                 others, for the wrappers that assert it (ChunkKVPress, BlockPress), and for
                 AdaKVPress, which asserts a non-eager attention (so no weights are returned)
  values         common.position_values (feature 0 = position; the case says "values":
                 "positions") unless the press reads values (cur, lagkv): then random values, given
                 in the fixture as each layer's "v", and the kept positions are read off the keys

Every case records "compression_ratio" (r) and "budget" = int(T * (1 - r)), kvpress's n_kept,
which kvbench's `ratio:<r>` must resolve to, and "params" in kvpress's field names. Stored heads
are KV heads (kvpress scores per KV head). "ties": per KV head, the tie group at the selection
boundary of the scores kvpress passed to topk (spied on), when it straddles the boundary; seeds
are searched for cases without ties.
"""
import argparse
import importlib
import os
import sys
import types
from types import SimpleNamespace

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

EPS = 1e-5  # common.boundary_ties' closeness: relative, absolute below 1


# ----------------------------------------------------------------------------------------------
# Importing kvpress's presses without its package __init__ (which imports the pipeline and every
# press) and without transformers.

def load_kvpress(reference):
    common.install_stubs()
    llama = importlib.import_module("transformers.models.llama.modeling_llama")
    llama.repeat_kv = common.repeat_kv  # transformers' layout: each KV head's G copies consecutive

    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)
    llama.rotate_half = rotate_half
    for name, path in (("kvpress", "kvpress"), ("kvpress.presses", "kvpress/presses")):
        pkg = types.ModuleType(name)
        pkg.__path__ = [os.path.join(reference, path)]
        sys.modules[name] = pkg
    names = {}
    for mod, cls in [("knorm_press", "KnormPress"), ("keydiff_press", "KeyDiffPress"),
                     ("random_press", "RandomPress"), ("streaming_llm_press", "StreamingLLMPress"),
                     ("tova_press", "TOVAPress"), ("snapkv_press", "SnapKVPress"),
                     ("observed_attention_press", "ObservedAttentionPress"),
                     ("pyramidkv_press", "PyramidKVPress"), ("lagkv_press", "LagKVPress"),
                     ("cur_press", "CURPress"), ("block_press", "BlockPress"),
                     ("adakv_press", "AdaKVPress"), ("chunkkv_press", "ChunkKVPress")]:
        names[cls] = getattr(importlib.import_module("kvpress.presses." + mod), cls)
    return SimpleNamespace(**names)


# ----------------------------------------------------------------------------------------------
# Running one press on one layer.

class TopkSpy:
    """Records (scores, k) of every topk call (Tensor.topk and torch.topk)."""

    def __enter__(self):
        self.calls = []
        self.real_method, self.real_fn = torch.Tensor.topk, torch.topk
        spy = self

        def method(self_, k, *a, **kw):
            spy.calls.append((self_.detach().clone(), int(k)))
            return spy.real_method(self_, k, *a, **kw)

        def fn(x, k, *a, **kw):
            spy.calls.append((x.detach().clone(), int(k)))
            return spy.real_fn(x, k, *a, **kw)
        torch.Tensor.topk, torch.topk = method, fn
        return self

    def __exit__(self, *exc):
        torch.Tensor.topk, torch.topk = self.real_method, self.real_fn


def make_module(heads, kv_heads, head_dim, layers, layer_idx, attn_impl):
    config = SimpleNamespace(num_attention_heads=heads, num_key_value_heads=kv_heads, num_hidden_layers=layers,
                             _attn_implementation=attn_impl, head_dim=head_dim)
    return SimpleNamespace(config=config, head_dim=head_dim, layer_idx=layer_idx, q_proj=lambda x: x)


def kept_by_rows(k, k_out):
    """Per KV head, the positions of the returned key rows (random keys: every row is unique)."""
    out = []
    for h in range(k.shape[1]):
        eq = (k_out[0, h][:, None, :] == k[0, h][None, :, :]).all(-1)  # [kept, n]
        assert (eq.sum(-1) == 1).all(), "key rows not unique"
        out.append(sorted(int(i) for i in eq.float().argmax(-1).tolist()))
    return out


def ties_at(scores, k, eps):
    return common.boundary_ties(scores, k, eps=eps)


class Spec:
    """A press: its file, how to build it from (ratio, params), what it reads, how it selects."""

    def __init__(self, key, file, code, make, attentions=False, reads_values=False, eps=EPS, kind="scorer"):
        self.key, self.file, self.code, self.make = key, file, code, make
        self.attentions, self.reads_values, self.eps, self.kind = attentions, reads_values, eps, kind


def run_layer(spec, press, q, k, v, layers, layer_idx):
    """compress() on one layer's prompt: (kept per KV head, ties per KV head, extra layer fields)."""
    heads, kv_heads, T, d = q.shape[1], k.shape[1], q.shape[2], q.shape[3]
    module = make_module(heads, kv_heads, d, layers, layer_idx, "sdpa" if spec.kind == "adakv" else "eager")
    hidden = q.transpose(1, 2).reshape(1, T, heads * d).contiguous()
    kwargs = {"position_embeddings": (torch.ones(1, T, d), torch.zeros(1, T, d))}
    attn = common.causal_attention(q, k) if spec.attentions else None
    with TopkSpy() as spy:
        k_out, v_out = press.compress(module, hidden, k.clone(), v.clone(), attn, kwargs)
    calls = spy.calls
    extra = {}
    if spec.kind == "adakv":
        assert k_out.shape == k.shape, "AdaKVPress must not prune"
        _, heads_idx, seq_idx = module.masked_key_indices
        masked = [set() for _ in range(kv_heads)]
        for h, s in zip(heads_idx.tolist(), seq_idx.tolist()):
            masked[h].add(s)
        kept = [[p for p in range(T) if p not in masked[h]] for h in range(kv_heads)]
        extra["kept_per_head"] = [len(x) for x in kept]
        return kept, adakv_ties(calls, kv_heads, T, spec.eps), extra
    kept = kept_by_rows(k, k_out) if spec.reads_values else common.kept_positions(v_out)
    if not spec.reads_values:
        assert kept == kept_by_rows(k, k_out)
    if spec.kind == "scorer":  # one topk over [1, kv_heads, T]: the indices are positions
        assert len(calls) == 1 and calls[0][0].shape == (1, kv_heads, T), [c[0].shape for c in calls]
        scores, n = calls[0]
        ties = ties_at(scores[0], n, spec.eps)
        if spec.key == "pyramidkv":
            extra["budget"] = n  # this layer's n_kept (get_layer_budget)
    elif spec.kind == "block":
        # A block step's indices are into (kept ∪ block), not positions: any tie at any step marks
        # every head as tied (tie_free then tries the next seed).
        tied = any(t for s, n in calls for t in ties_at(s[0], n, spec.eps))
        ties = [list(range(T)) if tied else [] for _ in range(kv_heads)]
        extra["block_steps"] = len(calls)
    elif spec.kind == "chunk":  # one topk over the [1, chunks] chunk scores
        assert len(calls) == 1 and calls[0][0].dim() == 2, [c[0].shape for c in calls]
        scores, n = calls[0]
        chunk = press.chunk_length
        t = ties_at(scores, n, spec.eps)[0]
        pos = sorted(p for c in t for p in range(c * chunk, min((c + 1) * chunk, T)))
        ties = [pos for _ in range(kv_heads)]
        extra["chunks_kept"] = n
    else:
        raise ValueError(spec.kind)
    return kept, ties, extra


def adakv_ties(calls, kv_heads, T, eps):
    """AdaKVPress: topk(scores, n_safe) per head (the safeguard: those scores are raised to the
    float max), then the bottom n_pruned of all heads' scores together. Ties: the global boundary's
    group, and a head's safeguard group unless all of it is kept anyway (its score above the first
    dropped one, as for the window's equal max+1 scores)."""
    (safe_scores, n_safe), (neg_flat, n_pruned) = calls
    eff = -neg_flat[0]  # [kv_heads * T] after the safeguard scatter
    n_kept_total = eff.numel() - n_pruned
    ties = [set() for _ in range(kv_heads)]
    for i in ties_at(eff[None], n_kept_total, eps)[0]:
        ties[i // T].add(i % T)
    first_dropped = torch.sort(eff, descending=True).values[n_kept_total].item() if n_pruned else float("-inf")
    for h, t in enumerate(ties_at(safe_scores[0], n_safe, eps)):
        if t and not safe_scores[0, h, t[0]].item() > first_dropped:
            ties[h].update(t)
    return [sorted(t) for t in ties]


# ----------------------------------------------------------------------------------------------
# Cases.

def rand_values(gen, kv_heads, T, d):
    return (torch.randn(1, kv_heads, T, d, generator=gen) * 1000).round() / 1000


def run_case(spec, name, seed, heads, kv_heads, T, ratio, params, layers=1, head_dim=8, decode=2, scale=2.0):
    gen = torch.Generator().manual_seed(seed)
    press = spec.make(ratio, params)
    step = {"tokens": T, "phase": "prefill", "compress": True, "layers": []}
    kept_all = []
    for layer in range(layers):
        q, k = common.rand_qk(gen, heads, kv_heads, T, head_dim, scale=scale)
        v = rand_values(gen, kv_heads, T, head_dim) if spec.reads_values else common.position_values(kv_heads, 0, T, head_dim)
        kept, ties, extra = run_layer(spec, press, q, k, v, layers, layer)
        entry = {"q": common.flat(q), "k": common.flat(k)}
        if spec.reads_values:
            entry["v"] = common.flat(v)
        entry.update({"kept": kept, "ties": ties})
        entry.update(extra)
        step["layers"].append(entry)
        kept_all.append(kept)
    steps = [step]
    for t in range(decode):  # kvpress compresses at the prefill only: decode tokens are appended
        pos = T + t
        layers_out = []
        for layer in range(layers):
            qd, kd = common.rand_qk(gen, heads, kv_heads, 1, head_dim)
            kept_all[layer] = [h + [pos] for h in kept_all[layer]]
            entry = {"q": common.flat(qd), "k": common.flat(kd)}
            if spec.reads_values:
                entry["v"] = common.flat(rand_values(gen, kv_heads, 1, head_dim))
            entry.update({"kept": kept_all[layer], "ties": [[] for _ in range(kv_heads)]})
            layers_out.append(entry)
        steps.append({"tokens": 1, "phase": "decode", "compress": False, "layers": layers_out})
    case = {"name": name, "seed": seed, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim,
            "layers": layers, "budget": int(T * (1 - ratio)), "compression_ratio": ratio, "prompt_len": T,
            "params": params}
    if not spec.reads_values:
        case["values"] = "positions"
    case["steps"] = steps
    return case


def n_tied(case):
    return sum(1 for s in case["steps"] for l in s["layers"] for t in l["ties"] if t)


def tie_free(spec, name, seed0, *args, **kw):
    """The first seed from seed0 whose selections have no boundary ties (else the last tried)."""
    for seed in range(seed0, seed0 + 300):
        case = run_case(spec, name, seed, *args, **kw)
        if not n_tied(case):
            return case
    return case


# ----------------------------------------------------------------------------------------------
# The presses and their cases.

SHAPES = [("mha", 4, 4), ("gqa4x2", 4, 2), ("gqa8x2", 8, 2)]
RATIOS = [0.25, 0.5, 0.75]
PROMPTS = [[48, 57, 75], [41, 64, 50], [80, 45, 67]]  # per shape, per ratio: 40-80 tokens


def grid(spec, seed0, params, **kw):
    cases = []
    for i, (shape, heads, kv_heads) in enumerate(SHAPES):
        for j, r in enumerate(RATIOS):
            T = PROMPTS[i][j]
            cases.append(tie_free(spec, f"{shape}_T{T}_r{r}", seed0 + 1000 * i + 100 * j, heads, kv_heads, T, r,
                                  dict(params), **kw))
    return cases


def lagkv_cases(spec):
    """LagKV's ranks repeat in every scored partition: a case is tie-free only where n_kept leaves
    whole rank levels, so the prompt length (40-80) is searched per case."""
    base = {"n_sink": 4, "lag_size": 8, "cross_scoring": False}
    cases = []
    for i, (shape, heads, kv_heads) in enumerate(SHAPES):
        for j, r in enumerate(RATIOS):
            for T in list(range(PROMPTS[i][j], 81)) + list(range(40, PROMPTS[i][j])):
                case = run_case(spec, "", 1400 + 1000 * i + 100 * j, heads, kv_heads, T, r, dict(base))
                if not n_tied(case):
                    break
            case["name"] = f"{shape}_T{case['prompt_len']}_r{r}"
            cases.append(case)
    for T in range(56, 81):
        case = run_case(spec, "", 1450, 4, 2, T, 0.5, {**base, "lag_size": 16})
        if not n_tied(case):
            break
    case["name"] = f"gqa4x2_T{case['prompt_len']}_r0.5_lag16"
    cases.append(case)
    # (n_kept must cover the sinks and the tail, whose equal scores 1 would tie otherwise)
    cases.append(tie_free(spec, "gqa8x2_T70_r0.75_cross", 1460, 8, 2, 70, 0.75, {**base, "cross_scoring": True}))
    cases.append(tie_free(spec, "mha_T68_r0.5_cross_lag16", 1470, 4, 4, 68, 0.5,
                          {**base, "lag_size": 16, "cross_scoring": True}))
    # q_len < n_sink + 2 lag_size: kvpress's "no compression" scores (sinks 1, then increasing)
    cases.append(tie_free(spec, "gqa4x2_T60_r0.5_short_lag32", 1480, 4, 2, 60, 0.5, {**base, "lag_size": 32}))
    return cases


def build(kp, key):
    """(Spec, cases, the registry's construction) of one key."""
    P = "kvpress/presses/"
    if key == "knorm":
        spec = Spec(key, P + "knorm_press.py", "KnormPress.score (-|k|) + ScorerPress.compress",
                    lambda r, p: kp.KnormPress(compression_ratio=r))
        return spec, grid(spec, 100, {}), "KnormPress()"
    if key == "keydiff":
        spec = Spec(key, P + "keydiff_press.py", "KeyDiffPress.score + ScorerPress.compress",
                    lambda r, p: kp.KeyDiffPress(compression_ratio=r))
        return spec, grid(spec, 200, {}), "KeyDiffPress()"
    if key == "random":
        spec = Spec(key, P + "random_press.py", "RandomPress(seed).score + ScorerPress.compress",
                    lambda r, p: kp.RandomPress(compression_ratio=r, seed=p["seed"]), eps=0.0)
        cases = []
        for i, (shape, heads, kv_heads) in enumerate(SHAPES):
            for j, r in enumerate(RATIOS):
                seed_param, T = [7, 42, 12345][j], PROMPTS[i][j]
                cases.append(tie_free(spec, f"{shape}_T{T}_r{r}_seed{seed_param}", 300 + 100 * i + 10 * j,
                                      heads, kv_heads, T, r, {"seed": seed_param}))
        return spec, cases, "RandomPress()"
    if key == "streaming_llm":
        spec = Spec(key, P + "streaming_llm_press.py", "StreamingLLMPress.score + ScorerPress.compress",
                    lambda r, p: kp.StreamingLLMPress(compression_ratio=r, n_sink=p["n_sink"]), eps=0.0)
        cases = grid(spec, 400, {"n_sink": 4})
        cases.append(tie_free(spec, "gqa4x2_T53_r0.5_sink0", 450, 4, 2, 53, 0.5, {"n_sink": 0}))
        cases.append(tie_free(spec, "mha_T61_r0.75_sink8", 460, 4, 4, 61, 0.75, {"n_sink": 8}))
        return spec, cases, "StreamingLLMPress()"
    if key == "tova":
        spec = Spec(key, P + "tova_press.py", "TOVAPress.score (eager attentions) + ScorerPress.compress",
                    lambda r, p: kp.TOVAPress(compression_ratio=r), attentions=True)
        return spec, grid(spec, 500, {}), "TOVAPress()"
    if key == "snapkv":
        spec = Spec(key, P + "snapkv_press.py", "SnapKVPress.score (eager attentions) + ScorerPress.compress",
                    lambda r, p: kp.SnapKVPress(compression_ratio=r, window_size=p["window_size"],
                                                kernel_size=p["kernel_size"]), attentions=True)
        cases = grid(spec, 600, {"window_size": 8, "kernel_size": 5})
        cases.append(tie_free(spec, "gqa4x2_T60_r0.5_w4_k3", 650, 4, 2, 60, 0.5, {"window_size": 4, "kernel_size": 3}))
        cases.append(tie_free(spec, "gqa8x2_T72_r0.25_w16_k7", 660, 8, 2, 72, 0.25, {"window_size": 16, "kernel_size": 7}))
        return spec, cases, "SnapKVPress()"
    if key == "observed_attention":
        spec = Spec(key, P + "observed_attention_press.py",
                    "ObservedAttentionPress.score (eager attentions) + ScorerPress.compress",
                    lambda r, p: kp.ObservedAttentionPress(compression_ratio=r), attentions=True)
        return spec, grid(spec, 700, {}), "ObservedAttentionPress()"
    if key == "pyramidkv":
        spec = Spec(key, P + "pyramidkv_press.py",
                    "PyramidKVPress.compress (get_layer_budget; SnapKV scores from eager attentions)",
                    lambda r, p: kp.PyramidKVPress(compression_ratio=r, window_size=p["window_size"],
                                                   kernel_size=p["kernel_size"], beta=p["beta"]), attentions=True)

        def pk(w, k, b):
            return {"window_size": w, "kernel_size": k, "beta": b}
        cases = [
            # pyramid branch with the default beta: a window of 3 lets min_num = base/20 reach it (q, k
            # drawn at scale 1: three peaked window queries leave many near-zero, near-tied scores)
            tie_free(spec, "mha_T80_r0.25_w3_beta20", 800, 4, 4, 80, 0.25, pk(3, 5, 20), layers=4, scale=1.0),
            tie_free(spec, "gqa4x2_T64_r0.25_w8_beta4", 810, 4, 2, 64, 0.25, pk(8, 5, 4), layers=4),
            tie_free(spec, "gqa4x2_T64_r0.5_w8_beta4", 820, 4, 2, 64, 0.5, pk(8, 5, 4), layers=4),
            tie_free(spec, "gqa8x2_T80_r0.75_w8_beta2", 830, 8, 2, 80, 0.75, pk(8, 5, 2), layers=5),
            tie_free(spec, "mha_T70_r0.5_w4_beta3", 840, 4, 4, 70, 0.5, pk(4, 3, 3), layers=3),
            # fallback (not n >= max >= min >= w): round(n(1-r)), Python round (12 here), not int() (11)
            tie_free(spec, "gqa4x2_T47_r0.75_w8_beta20_fallback", 850, 4, 2, 47, 0.75, pk(8, 5, 20), layers=3),
            # max_num clamped to n - w, min_num = 2 base - max_num; base 43.5: layer budgets 50, 44, 37
            tie_free(spec, "gqa8x2_T58_r0.25_w8_beta20_clamped", 860, 8, 2, 58, 0.25, pk(8, 5, 20), layers=3),
        ]
        return spec, cases, "PyramidKVPress()"
    if key == "lagkv":
        spec = Spec(key, P + "lagkv_press.py", "LagKVPress.score + ScorerPress.compress", reads_values=True,
                    make=lambda r, p: kp.LagKVPress(compression_ratio=r, n_sink=p["n_sink"], lag_size=p["lag_size"],
                                                    cross_scoring=p["cross_scoring"]))
        return spec, lagkv_cases(spec), "LagKVPress()"
    if key == "cur":
        spec = Spec(key, P + "cur_press.py", "CURPress.score + ScorerPress.compress", reads_values=True,
                    make=lambda r, p: kp.CURPress(compression_ratio=r, **p))
        base = {"num_sinks": 4, "leverage_type": "kv_product", "use_random_leverage": False,
                "use_local_approximation": True, "local_window_size": 16}
        cases = grid(spec, 1000, base)
        for i, (name, over, heads, kv_heads, T, r) in enumerate([
                ("gqa4x2_key", {"leverage_type": "key"}, 4, 2, 52, 0.5),
                ("gqa8x2_value", {"leverage_type": "value"}, 8, 2, 61, 0.25),
                ("mha_kv_avg", {"leverage_type": "kv_avg"}, 4, 4, 70, 0.75),
                ("gqa4x2_global", {"use_local_approximation": False}, 4, 2, 44, 0.5),
                ("gqa8x2_window8_sinks2", {"local_window_size": 8, "num_sinks": 2}, 8, 2, 77, 0.5)]):
            cases.append(tie_free(spec, f"{name}_T{T}_r{r}", 1050 + 10 * i, heads, kv_heads, T, r, {**base, **over}))
        return spec, cases, "CURPress()"
    if key == "block_keydiff":
        spec = Spec(key, P + "block_press.py", "BlockPress(KeyDiffPress).compress", kind="block",
                    make=lambda r, p: kp.BlockPress(press=kp.KeyDiffPress(compression_ratio=r),
                                                    block_size=p["block_size"]))
        cases = grid(spec, 1100, {"block_size": 16})
        cases.append(tie_free(spec, "gqa4x2_T66_r0.5_block7", 1150, 4, 2, 66, 0.5, {"block_size": 7}))
        cases.append(tie_free(spec, "mha_T40_r0.25_block64", 1160, 4, 4, 40, 0.25, {"block_size": 64}))
        return spec, cases, "BlockPress(press=KeyDiffPress(), block_size=128)"
    if key == "adakv_snapkv":
        spec = Spec(key, P + "adakv_press.py",
                    "AdaKVPress(SnapKVPress).compress (module.masked_key_indices; window attention from q)",
                    kind="adakv",
                    make=lambda r, p: kp.AdaKVPress(press=kp.SnapKVPress(compression_ratio=r, window_size=p["window_size"],
                                                                         kernel_size=p["kernel_size"]),
                                                    alpha_safeguard=p["alpha_safeguard"]))
        base = {"alpha_safeguard": 0.2, "window_size": 8, "kernel_size": 5}
        cases = grid(spec, 1200, base)
        cases.append(tie_free(spec, "gqa4x2_T60_r0.5_alpha0.5", 1250, 4, 2, 60, 0.5, {**base, "alpha_safeguard": 0.5}))
        cases.append(tie_free(spec, "gqa8x2_T72_r0.75_alpha0", 1260, 8, 2, 72, 0.75, {**base, "alpha_safeguard": 0.0}))
        return spec, cases, "AdaKVPress(SnapKVPress())"
    if key == "chunkkv":
        spec = Spec(key, P + "chunkkv_press.py", "ChunkKVPress(SnapKVPress).compress (window attention from q)",
                    kind="chunk",
                    make=lambda r, p: kp.ChunkKVPress(press=kp.SnapKVPress(compression_ratio=r, window_size=p["window_size"],
                                                                           kernel_size=p["kernel_size"]),
                                                      chunk_length=p["chunk_length"]))
        base = {"chunk_length": 10, "window_size": 8, "kernel_size": 5}
        cases = grid(spec, 1300, base)
        cases.append(tie_free(spec, "gqa4x2_T64_r0.5_chunk8", 1350, 4, 2, 64, 0.5, {**base, "chunk_length": 8}))
        cases.append(tie_free(spec, "gqa8x2_T59_r0.25_chunk20", 1360, 8, 2, 59, 0.25, {**base, "chunk_length": 20}))
        return spec, cases, "ChunkKVPress(press=SnapKVPress(), chunk_length=20)"
    raise ValueError(key)


KEYS = ["knorm", "keydiff", "random", "streaming_llm", "tova", "snapkv", "observed_attention", "pyramidkv",
        "lagkv", "cur", "block_keydiff", "adakv_snapkv", "chunkkv"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="checkout of NVIDIA/kvpress")
    ap.add_argument("--commit", default="", help="the checkout's commit, recorded in the fixtures")
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                      "tests", "fixtures", "policy_parity"))
    ap.add_argument("--only", default="", help="comma-separated keys (default: all)")
    a = ap.parse_args()
    kp = load_kvpress(a.reference)
    for key in (a.only.split(",") if a.only else KEYS):
        spec, cases, registry = build(kp, key)
        reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "file": spec.file, "code": spec.code,
                     "registry": registry}
        common.write(os.path.join(a.out_dir, f"kvpress_{key}.json"), f"kvpress:{key}", {}, reference, cases)


if __name__ == "__main__":
    main()
