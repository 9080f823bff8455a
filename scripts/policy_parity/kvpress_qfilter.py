#!/usr/bin/python3
"""kvpress parity fixture of QFilterPress (registry key qfilter): kvpress's class scores with the
Q-filters it would load from nthngdy/<model>_qfilt; here they are fixed random filters, set on the
press as post_init_from_model sets them, and recorded in the case ("q_filters", [layers, kv_heads,
head_dim]) for the test to write as model.safetensors. huggingface_hub (imported by the press's
file) is stubbed: nothing is downloaded. kvpress's classes are imported from a checkout, never
copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_qfilter.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity
"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from kvpress_critical import load_presses, run_press, tied  # noqa: E402


def stub_huggingface_hub():
    hub = types.ModuleType("huggingface_hub")

    class PyTorchModelHubMixin:  # the press's QFilters derives from it; from_pretrained is not used here
        pass

    hub.PyTorchModelHubMixin = PyTorchModelHubMixin
    hub.get_collection = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("no network in the recorder"))
    sys.modules["huggingface_hub"] = hub


def make_case(P, seed, heads, kv_heads, T, ratio, layers, d=8):
    gen = torch.Generator().manual_seed(seed)
    filters = (torch.randn(layers, kv_heads, d, generator=gen) * 1000).round() / 1000
    steps_layers = []
    for layer in range(layers):
        q, k = common.rand_qk(gen, heads, kv_heads, T, d)
        v = common.position_values(kv_heads, 0, T, d)
        press = P("qfilter_press").QFilterPress(compression_ratio=ratio)
        press.q_filters = filters  # as post_init_from_model, without the download
        kept, ties = run_press(press, "scorer", q, k, v, layer, layers)
        steps_layers.append({"q": common.flat(q), "k": common.flat(k), "kept": kept, "ties": ties})
    return {"name": f"qfilter_h{heads}_kv{kv_heads}_T{T}_r{ratio}_L{layers}_s{seed}", "seed": seed, "heads": heads,
            "kv_heads": kv_heads, "head_dim": d, "layers": layers, "prompt_len": T, "budget": int(T * (1 - ratio)),
            "compression_ratio": ratio, "params": {}, "values": "positions", "q_filters": common.flat(filters),
            "steps": [{"tokens": T, "phase": "prefill", "compress": True, "layers": steps_layers}]}


SHAPES = [(4, 4, 48, 0.25, 2), (4, 2, 64, 0.5, 3), (8, 2, 56, 0.75, 2), (4, 2, 61, 0.6, 1), (4, 4, 40, 0.5, 2)]


def main():
    a = common.recorder_args()
    stub_huggingface_hub()
    P = load_presses(a.reference)
    cases = []
    for i, shape in enumerate(SHAPES):
        for seed in range(1000 * (i + 1), 1000 * (i + 1) + 200):  # the first seed without boundary ties
            case = make_case(P, seed, *shape)
            if not tied(case):
                break
        cases.append(case)
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_key": "qfilter"}
    common.write(os.path.join(a.out_dir, "kvpress_qfilter.json"), "kvpress:qfilter", {}, reference, cases)


if __name__ == "__main__":
    main()
