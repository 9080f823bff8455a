#!/usr/bin/python3
"""kvpress parity fixtures of CriticalKVPress and CriticalAdaKVPress around SnapKVPress (registry
keys critical_snapkv, critical_adakv_snapkv), which read the layer's output projection W_o besides the attention weights
(scripts/policy_parity/kvpress.py records the other keys, kvpress_expected_attention.py
ExpectedAttentionPress). kvpress's classes are imported from a checkout, never copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_critical.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity

Writes kvpress_<key>.json: common.py's layout with each layer's "wo" and "v".
"""
import argparse
import importlib
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import reference_stubs  # noqa: E402


def load_presses(root):
    reference_stubs.install_transformers_stub()
    common.install_stubs()  # any other transformers.* name: a placeholder
    for name, path in (("kvpress", root + "/kvpress"), ("kvpress.presses", root + "/kvpress/presses")):
        package = types.ModuleType(name)  # without its __init__, which imports the pipeline
        package.__path__ = [path]
        sys.modules[name] = package
    return lambda module: importlib.import_module("kvpress.presses." + module)


def module_for(heads, kv_heads, head_dim, layer=0, layers=1):
    config = types.SimpleNamespace(num_attention_heads=heads, num_key_value_heads=kv_heads, num_hidden_layers=layers,
                                   _attn_implementation="sdpa", head_dim=head_dim)
    m = types.SimpleNamespace(config=config, head_dim=head_dim, layer_idx=layer, num_key_value_groups=heads // kv_heads)
    identity = torch.nn.Linear(heads * head_dim, heads * head_dim, bias=False)
    with torch.no_grad():
        identity.weight.copy_(torch.eye(heads * head_dim))
    m.q_proj = identity
    return m


class TopkSpy:
    """Records every Tensor.topk call (input, k, indices)."""

    def __enter__(self):
        self.calls, self.real = [], torch.Tensor.topk
        real, calls = self.real, self.calls

        def spy(t, k, *a, **kw):
            out = real(t, k, *a, **kw)
            calls.append((t.detach().clone(), k, out.indices.clone()))
            return out
        torch.Tensor.topk = spy
        return self

    def __exit__(self, *exc):
        torch.Tensor.topk = self.real


def run_press(press, kind, q, k, v, layer=0, layers=1, wo=None):
    """The positions each KV head keeps [[...] per head] and the boundary ties."""
    heads, kv_heads, T, d = q.shape[1], k.shape[1], q.shape[2], q.shape[3]
    module = module_for(heads, kv_heads, d, layer, layers)
    if wo is not None:  # CriticalKVPress reads o_proj.weight [hidden, heads·d]
        module.o_proj = types.SimpleNamespace(weight=wo)
        module.config.hidden_size = wo.shape[0]
    attentions = None if kind == "chunk" else common.causal_attention(q, k)
    hidden = q.transpose(1, 2).reshape(1, T, heads * d)  # q_proj is the identity
    cos, sin = torch.ones(1, T, d), torch.zeros(1, T, d)
    kwargs = {"position_embeddings": (cos, sin)}
    with TopkSpy() as spy:
        keys, values = press.compress(module, hidden, k.clone(), v.clone(), attentions, kwargs)
    if kind == "mask":  # AdaKVPress: the pruned (batch, head, position) triples
        _, hs, ps = module.masked_key_indices
        pruned = [set() for _ in range(kv_heads)]
        for h, p in zip(hs.tolist(), ps.tolist()):
            pruned[h].add(p)
        kept = [sorted(set(range(T)) - pruned[h]) for h in range(kv_heads)]
        return kept, [[] for _ in range(kv_heads)]  # global boundary ties: see the tie-free seeds
    if kind == "chunk":
        return common.kept_positions(values), [[] for _ in range(kv_heads)]
    scores, n_kept, indices = spy.calls[-1]
    kept = [sorted(indices[0, h].tolist()) for h in range(kv_heads)]
    return kept, common.boundary_ties(scores[0], n_kept, eps=1e-5)


def tied(case):
    return any(t for s in case["steps"] for l in s["layers"] for t in l["ties"])


def make_case(P, key, spec, seed, heads, kv_heads, T, ratio, layers=1, d=8, random_values=False):
    gen = torch.Generator().manual_seed(seed)
    steps_layers = []
    for layer in range(layers):
        q, k = common.rand_qk(gen, heads, kv_heads, T, d)
        if random_values:
            v = (torch.randn(1, kv_heads, T, d, generator=gen) * 1000).round() / 1000
        else:
            v = common.position_values(kv_heads, 0, T, d)
        press = spec["build"](P, ratio)
        wo = None
        if spec.get("output_projection"):
            wo = (torch.randn(12, heads * d, generator=gen) * 1000).round() / 1000
        kept, ties = run_press(press, spec.get("kind", "scorer"), q, k, v, layer, layers, wo)
        entry = {"q": common.flat(q), "k": common.flat(k), "kept": kept, "ties": ties}
        if wo is not None:
            entry["wo"] = common.flat(wo)
        if random_values:
            entry["v"] = common.flat(v)
        steps_layers.append(entry)
    case = {"name": f"{key}_h{heads}_kv{kv_heads}_T{T}_r{ratio}_s{seed}", "seed": seed, "heads": heads,
            "kv_heads": kv_heads, "head_dim": d, "layers": layers, "prompt_len": T,
            "budget": int(T * (1 - ratio)), "compression_ratio": ratio, "params": spec.get("params", {}),
            "steps": [{"tokens": T, "phase": "prefill", "compress": True, "layers": steps_layers}]}
    if not random_values:
        case["values"] = "positions"
    return case


def tie_free(P, key, spec, first_seed, *shape, **kw):
    for seed in range(first_seed, first_seed + 200):
        case = make_case(P, key, spec, seed, *shape, **kw)
        if not tied(case):
            return case
    return case


# Each registry key: how the registry builds it (with parameters scaled to short prompts, named
# in "params" as kvbench's policy takes them).
SPECS = {}  # filled below: only the presses that read W_o
SPECS["critical_snapkv"] = {
    "build": lambda P, r: P("criticalkv_press").CriticalKVPress(
        P("snapkv_press").SnapKVPress(compression_ratio=r, window_size=8, kernel_size=5)),
    "params": {"window_size": 8, "kernel_size": 5}, "random_values": True, "output_projection": True}
SPECS["critical_adakv_snapkv"] = {
    "build": lambda P, r: P("criticalkv_press").CriticalAdaKVPress(
        P("snapkv_press").SnapKVPress(compression_ratio=r, window_size=8, kernel_size=5)),
    "params": {"window_size": 8, "kernel_size": 5}, "random_values": True, "output_projection": True, "kind": "mask"}
SHAPES = [(4, 4, 48, 0.25), (4, 4, 48, 0.5), (4, 2, 64, 0.5), (8, 2, 56, 0.75), (4, 2, 61, 0.6)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="checkout of NVIDIA/kvpress")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    P = load_presses(a.reference)
    for key, spec in SPECS.items():
        if a.only and key not in a.only:
            continue
        cases = []
        for i, (heads, kv_heads, T, ratio) in enumerate(SHAPES):
            cases.append(tie_free(P, key, spec, 1000 * (i + 1), heads, kv_heads, T, ratio, layers=spec.get("layers", 1),
                                  random_values=spec.get("random_values", False)))
        reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_key": key}
        common.write(os.path.join(a.out_dir, f"kvpress_{key}.json"), "kvpress:" + key, spec.get("params", {}), reference, cases)


if __name__ == "__main__":
    main()
