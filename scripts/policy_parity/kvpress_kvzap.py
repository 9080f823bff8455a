#!/usr/bin/python3
"""kvpress parity fixture of KVzapPress and DMSPress (registry keys kvzap_mlp_head, kvzap_linear,
kvzap_mlp): kvpress's classes score fixed hidden states with a fixed random KVzap model (in place of
nvidia/KVzap-<type>-<model>), through ScorerPress.compress (kvzap_mlp_head) or DMSPress's forward
hook (kvzap_linear, kvzap_mlp: a prefill, then decode steps when `decoding`). Each case stores the
model as it would be saved (config.json fields and model.safetensors tensors by name), the hidden
states of every forward and the positions each KV head keeps at the end. transformers is stubbed
(PreTrainedModel/PretrainedConfig: placeholders; the model's ModuleList is real torch). kvpress's
classes are imported from a checkout, never copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_kvzap.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity
"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from kvpress_critical import TopkSpy, load_presses, module_for  # noqa: E402


def rounded(t):
    return (t * 1000).round() / 1000


def kvzap_model(P, gen, layers, dim, kv_heads, hidden):
    """kvpress's KVzapModel with random weights, and its tensors by the names transformers saves."""
    kz = P("kvzap_press")
    model = kz.KVzapModel(types.SimpleNamespace(input_dim=dim, output_dim=kv_heads, n_modules=layers, hidden_dim=hidden))
    tensors = {}
    with torch.no_grad():
        for i, module in enumerate(model.layers):
            for name, param in module.named_parameters():
                param.copy_(rounded(torch.randn(param.shape, generator=gen)))
                tensors[f"layers.{i}.{name}"] = {"shape": list(param.shape), "data": common.flat(param)}
    config = {"input_dim": dim, "output_dim": kv_heads, "n_modules": layers, "hidden_dim": hidden, "model_type": "kvzap"}
    return model, config, tensors


def make_case(P, key, seed, layers, heads, kv_heads, dim, T, steps, ratio=None, threshold=None, window=None,
              decoding=False):
    gen = torch.Generator().manual_seed(seed)
    hidden = 8 if key != "kvzap_linear" else None
    model, config, tensors = kvzap_model(P, gen, layers, dim, kv_heads, hidden)
    press = P("kvzap_press").KVzapPress(model_type="linear" if hidden is None else "mlp")
    press.kvzap_model = model  # as post_init_from_model, without the download
    d = 4
    forwards = [T] + [1] * steps
    hidden_states = [rounded(torch.randn(1, n, dim, generator=gen)) for n in forwards]
    case_layers = []
    if key == "kvzap_mlp_head":  # ScorerPress.compress, once after the prefill
        for layer in range(layers):
            module = module_for(heads, kv_heads, d, layer, layers)
            k = torch.zeros(1, kv_heads, T, d)
            with TopkSpy() as spy:
                press.compression_ratio = ratio
                press.compress(module, hidden_states[0], k, k.clone(), None, {})
            scores, n_kept, indices = spy.calls[-1]
            case_layers.append({"kept": [sorted(indices[0, h].tolist()) for h in range(kv_heads)],
                                "ties": common.boundary_ties(scores[0], n_kept, eps=1e-4)})
    else:  # DMSPress's forward hook, per layer and forward
        dms = P("dms_press").DMSPress(press=press, threshold=threshold, sliding_window_size=window, decoding=decoding)
        for layer in range(layers):
            module = module_for(heads, kv_heads, d, layer, layers)
            module.masked_key_indices = None
            total = 0
            near = 0
            for h_states in hidden_states:
                n = h_states.shape[1]
                total += n
                cache = types.SimpleNamespace(layers=[None] * layers)
                cache.layers[layer] = types.SimpleNamespace(keys=torch.zeros(1, kv_heads, total, d),
                                                            values=torch.zeros(1, kv_heads, total, d))
                kwargs = {"hidden_states": h_states, "past_key_values": cache,
                          "cache_position": torch.arange(total - n, total)}
                dms.forward_hook(module, [], kwargs, None)
                s = press.score(module, h_states, None, None, None, kwargs)
                near += int(((s - threshold).abs() < 1e-4).sum())
            pruned = [set() for _ in range(kv_heads)]
            if module.masked_key_indices is not None:
                _, hs, ps = module.masked_key_indices
                for h, p in zip(hs.tolist(), ps.tolist()):
                    pruned[h].add(p)
            case_layers.append({"kept": [sorted(set(range(total)) - pruned[h]) for h in range(kv_heads)],
                                "near_threshold": near})
    case = {"name": f"{key}_L{layers}_h{heads}_kv{kv_heads}_T{T}_s{seed}", "policy": "kvpress:" + key, "seed": seed,
            "heads": heads, "kv_heads": kv_heads, "head_dim": d, "layers": layers, "prompt_len": T, "hidden_size": dim,
            "kvzap_config": config, "kvzap_tensors": tensors,
            "forwards": [common.flat(h[0]) for h in hidden_states], "layer_results": case_layers, "params": {}}
    if ratio is not None:
        case.update({"compression_ratio": ratio, "budget": int(T * (1 - ratio))})
    else:  # DMSPress keeps tokens by its threshold: the job's budget is "full"
        case.update({"budget": T, "params": {"threshold": threshold, "sliding_window_size": window, "decoding": decoding}})
    return case


def quiet(case):
    return all(not any(l.get("ties", [])) and l.get("near_threshold", 0) == 0 for l in case["layer_results"])


CASES = [
    ("kvzap_mlp_head", dict(layers=2, heads=4, kv_heads=2, dim=16, T=40, steps=0, ratio=0.5)),
    ("kvzap_mlp_head", dict(layers=1, heads=4, kv_heads=4, dim=12, T=33, steps=0, ratio=0.25)),
    ("kvzap_linear", dict(layers=2, heads=4, kv_heads=2, dim=16, T=40, steps=0, threshold=0.0, window=8)),
    ("kvzap_linear", dict(layers=1, heads=8, kv_heads=2, dim=12, T=30, steps=3, threshold=-1.0, window=4)),
    ("kvzap_mlp", dict(layers=2, heads=4, kv_heads=4, dim=16, T=24, steps=10, threshold=0.5, window=6, decoding=True)),
    ("kvzap_mlp", dict(layers=1, heads=4, kv_heads=2, dim=12, T=20, steps=5, threshold=0.0, window=30, decoding=False)),
]


def main():
    a = common.recorder_args()
    P = load_presses(a.reference)
    cases = []
    for i, (key, shape) in enumerate(CASES):
        for seed in range(100 * (i + 1), 100 * (i + 1) + 100):  # the first seed far from ties and the threshold
            case = make_case(P, key, seed, **shape)
            if quiet(case):
                break
        cases.append(case)
    out = os.path.join(a.out_dir, "kvpress_kvzap.json")
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_keys": ["kvzap_mlp_head", "kvzap_linear", "kvzap_mlp"]}
    common.write_cases(out, reference, cases)


if __name__ == "__main__":
    main()
