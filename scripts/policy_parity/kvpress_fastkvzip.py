#!/usr/bin/python3
"""kvpress parity fixture of FastKVzipPress (registry key fastkvzip), and the gate files it reads.

Gate files are written as Janghyun1230/FastKVzip's optim.py writes the published ones (Hugging Face
Jang-Hyun/Fast-KVzip, <model>/q<G>_dim16_sink16.pt): torch.save of {"module": [one state_dict per
layer: q_proj.weight, q_proj.bias, k_proj.weight, q_norm.weight, k_norm.weight, b, k_base],
"loss", "acc", "loss_train", "acc_train": NumPy float64 arrays}; random weights here. kvpress's own
load_fastkvzip() reads them back (hf_hub_download and AutoConfig stubbed to hand it the file and the
shape), its forward hook scores each layer's prefill hidden states, and compress_post() picks the
pairs to mask: the fixture records, per layer and KV head, the positions left. kvpress's classes
are imported from a checkout, never copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_fastkvzip.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity

Writes kvpress_fastkvzip.json (cases: layout, params, ratio, the gate file relative to the fixture
folder, per layer the hidden states "h" [n, D] and "kept" per KV head, "ties") and the gate files
under fastkvzip/: one per case, one in bfloat16 (the published dtype; its tensors are recorded as
floats to check the reader), and stories260k/q2_dim16_sink16.pt for stories260K's shape (the tests
that run every policy).
"""
import collections
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from kvpress_critical import TopkSpy, load_presses  # noqa: E402


class RMSNorm(torch.nn.Module):
    """transformers' Qwen3RMSNorm (eps 1e-6): in float32, scaled, back to the input's dtype."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        dtype = hidden_states.dtype
        x = hidden_states.to(torch.float32)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * x.to(dtype)


def gate_state(gen, hidden, heads, groups, dtype, sink=16, dim=16):
    """One layer's state_dict as optim.py saves it (keys in its order, an OrderedDict)."""
    def rnd(*shape, scale=1.0):
        return ((torch.randn(*shape, generator=gen) * scale * 1000).round() / 1000)
    s = collections.OrderedDict()
    s["q_proj.weight"] = rnd(heads * groups * dim, hidden, scale=0.3).to(dtype)
    s["q_proj.bias"] = rnd(heads * groups * dim, scale=0.1).to(dtype)
    s["k_proj.weight"] = rnd(heads * dim, hidden, scale=0.3).to(dtype)
    s["q_norm.weight"] = 1 + rnd(dim, scale=0.1)
    s["k_norm.weight"] = 1 + rnd(dim, scale=0.1)
    s["b"] = rnd(heads, 1, groups).to(dtype)
    s["k_base"] = rnd(heads, 1, sink, dim)
    s._metadata = collections.OrderedDict([("", {"version": 1})] + [(m, {"version": 1}) for m in ("q_proj", "k_proj", "q_norm", "k_norm")])
    return s


def write_gates(path, seed, layers, hidden, heads, groups, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    modules = [gate_state(gen, hidden, heads, groups, dtype) for _ in range(layers)]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    curve = np.linspace(1.0, 0.5, 4 * layers).reshape(4, layers)
    torch.save({"module": modules, "loss": curve, "acc": 1 - curve, "loss_train": curve, "acc_train": 1 - curve}, path)
    return modules


def stub_hub(fk, gate_file, heads, kv_heads):
    """hf_hub_download hands kvpress the gate file; AutoConfig the layout its file name needs."""
    fk.hf_hub_download = lambda repo_id, filename, repo_type: gate_file
    fk.AutoConfig = types.SimpleNamespace(
        from_pretrained=lambda name: types.SimpleNamespace(num_attention_heads=heads, num_key_value_heads=kv_heads))


def run_case(P, out_dir, name, seed, layers, heads, kv_heads, hidden, n, ratio, params):
    gate_rel = f"fastkvzip/{name}.pt"
    gate_file = os.path.join(out_dir, gate_rel)
    write_gates(gate_file, seed, layers, hidden, kv_heads, heads // kv_heads)
    fk = P("fastkvzip_press")
    stub_hub(fk, gate_file, heads, kv_heads)
    press = fk.FastKVzipPress(compression_ratio=ratio, **params)
    press.gates = fk.load_fastkvzip("stand-in/model", device="cpu")
    press.score_val = [None] * layers
    gen = torch.Generator().manual_seed(seed + 1)
    config = types.SimpleNamespace(_attn_implementation="sdpa")
    model_layers, hs = [], []
    for l in range(layers):
        h = (torch.randn(1, n, hidden, generator=gen) * 1000).round() / 1000
        attn = types.SimpleNamespace(layer_idx=l, config=config)
        press._score_fast(attn, h)
        model_layers.append(types.SimpleNamespace(self_attn=attn))
        hs.append(h)
    model = types.SimpleNamespace(model=types.SimpleNamespace(layers=model_layers))
    with TopkSpy() as spy:
        press.compress_post(model)
    # Ties at a selection boundary: topk over -scores (the global count's, then each layer's).
    ties = [[set() for _ in range(kv_heads)] for _ in range(layers)]
    tied = False
    for scores, k, _ in spy.calls:
        flat = scores.reshape(1, -1)
        group = common.boundary_ties(flat, k)[0]
        if group:
            tied = True
            if flat.numel() == kv_heads * n:  # one layer's: (head, token) pairs
                layer = next(l for l in range(layers) if torch.equal(-press.score_val[l].reshape(-1), flat[0]))
                for j in group:
                    ties[layer][j // n].add(j % n)
    per_layer = []
    for l in range(layers):
        kept = [set(range(n)) for _ in range(kv_heads)]
        if hasattr(model_layers[l].self_attn, "masked_key_indices"):
            _, hs_idx, ps = model_layers[l].self_attn.masked_key_indices
            for h, p in zip(hs_idx.tolist(), ps.tolist()):
                kept[h].discard(p)
        per_layer.append({"h": common.flat(hs[l][0]), "kept": [sorted(k) for k in kept], "ties": [sorted(t) for t in ties[l]]})
    # head_dim: the cache's, any (the gates read hidden states, never keys)
    case = {"name": name, "policy": "kvpress:fastkvzip", "seed": seed, "layers": layers, "heads": heads, "kv_heads": kv_heads,
            "head_dim": 4, "hidden": hidden, "prompt_len": n, "compression_ratio": ratio, "budget": int(n * (1 - ratio)), "params": params,
            "gates": gate_rel, "per_layer": per_layer}
    return case, tied


def main():
    args = common.recorder_args()
    P = load_presses(args.reference)
    import importlib
    importlib.import_module("transformers.models.qwen3.modeling_qwen3").Qwen3RMSNorm = RMSNorm  # the stub's: it must compute
    sys.modules["huggingface_hub"] = types.ModuleType("huggingface_hub")  # replaced per case (stub_hub)
    sys.modules["huggingface_hub"].hf_hub_download = None
    layouts = [  # name, layers, heads, kv_heads, hidden, n, ratio, params
        ("gqa8x2_L2_n120_r0.5", 2, 8, 2, 32, 120, 0.5, {}),
        ("mha4_L3_n80_r0.25", 3, 4, 4, 24, 80, 0.25, {}),
        ("gqa8x4_L2_n100_r0.75_layerwise", 2, 8, 4, 32, 100, 0.75, {"layerwise": True}),
        ("gqa4x2_L2_n64_r0.5_sinks2_window0.1", 2, 4, 2, 16, 64, 0.5, {"n_sink": 2, "window_ratio": 0.1}),
    ]
    cases = []
    for i, (name, layers, heads, kv_heads, hidden, n, ratio, params) in enumerate(layouts):
        for seed in range(2000 + 100 * i, 2000 + 100 * i + 40):
            case, tied = run_case(P, args.out_dir, name, seed, layers, heads, kv_heads, hidden, n, ratio, params)
            if not tied:
                cases.append(case)
                break
        else:
            raise SystemExit(f"{name}: no tie-free seed")
    # The published dtype: bfloat16 projections and biases, float32 norms and sink keys.
    bf16 = write_gates(os.path.join(args.out_dir, "fastkvzip/bf16_L1.pt"), 99, 1, 8, 2, 2, torch.bfloat16)
    reader = {"file": "fastkvzip/bf16_L1.pt",
              "tensors": {k: {"dtype": str(v.dtype).replace("torch.", ""), "shape": list(v.shape), "values": v.float().reshape(-1).tolist()}
                          for k, v in bf16[0].items()}}
    # stories260K: dim 64, 8 heads, 4 KV heads (G = 2), 5 layers.
    write_gates(os.path.join(args.out_dir, "fastkvzip/stories260k/q2_dim16_sink16.pt"), 7, 5, 64, 4, 2)
    common.write_cases(os.path.join(args.out_dir, "kvpress_fastkvzip.json"),
                       {"repo": "NVIDIA/kvpress", "commit": args.commit, "file": "kvpress/presses/fastkvzip_press.py",
                        "driver": "scripts/policy_parity/kvpress_fastkvzip.py", "reader": reader}, cases)


if __name__ == "__main__":
    main()
