#!/usr/bin/python3
"""kvpress parity fixture of KVComposePress (registry keys kvcompose, kvcompose_unstructured): the
positions each layer's KV heads keep after kvpress's class saw the context forwarded a second time
after itself. kvpress's forward hook gets the second pass's attention weights (eager softmax over the
context and the pass's own causal keys), then prepare_important_masks() and compress_cache() run as
they do when the press context closes. kvpress's classes are imported from a checkout, never copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_kvcompose.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity

Writes kvpress_kvcompose.json: cases with their policy, params and compression ratio, per layer the
context's keys and values ("k", "v" [kv_heads, n, d]), the second pass's queries and keys ("q2" [heads,
n, d], "k2" [kv_heads, n, d]) and "kept" (per KV head, the positions kept, ascending). Cases are drawn
until no selection boundary (the layers' or heads' counts, a head's top tokens) is a tie.
"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from kvpress_critical import load_presses, module_for  # noqa: E402


def rounded(gen, *shape, scale=1.0):
    return (torch.randn(*shape, generator=gen) * scale * 1000).round() / 1000


def boundary_tied(values, k):
    """Whether the k-th and (k+1)-th largest of `values` are equal (topk's choice unspecified)."""
    s = torch.sort(values.reshape(-1), descending=True).values
    return 0 < k < s.numel() and s[k - 1].item() == s[k].item()


def run_case(P, key, params, seed, layers, heads, kv_heads, d, n, ratio):
    gen = torch.Generator().manual_seed(seed)
    press = P("kvcompose_press").KVComposePress(compression_ratio=ratio, **params)
    press.num_layers, press.num_att_heads, press.num_kv_heads = layers, heads, kv_heads
    press.num_kv_groups, press.device = heads // kv_heads, "cpu"
    press.register_context_ids(torch.zeros(1, n, dtype=torch.long))
    recorded, cache_layers = [], []
    for layer in range(layers):
        k, v = rounded(gen, 1, kv_heads, n, d, scale=2.0), rounded(gen, 1, kv_heads, n, d)
        q1 = rounded(gen, 1, heads, n, d, scale=2.0)
        q2, k2, v2 = rounded(gen, 1, heads, n, d, scale=2.0), rounded(gen, 1, kv_heads, n, d, scale=2.0), rounded(gen, 1, kv_heads, n, d)
        module = module_for(heads, kv_heads, d, layer=layer, layers=layers)
        # The context's own prefill (square weights: the hook skips them), then the second pass.
        press.forward_hook(module, [], {}, (None, common.causal_attention(q1, k)))
        keys, values = torch.cat([k, k2], 2), torch.cat([v, v2], 2)
        press.forward_hook(module, [], {}, (None, common.causal_attention(q2, keys)))
        cache_layers.append(types.SimpleNamespace(keys=keys, values=values))
        recorded.append({"k": common.flat(k), "v": common.flat(v), "q2": common.flat(q2), "k2": common.flat(k2)})
    press._register_cache(types.SimpleNamespace(layers=cache_layers))
    press.prepare_important_masks()
    # The counts' boundaries and each head's top tokens must be strict for the comparison to mean much.
    tied = boundary_tied(press.composite_scores_per_layer, int(press.composite_scores_per_layer.numel() * (1 - ratio))) \
        if params.get("structured", True) else \
        boundary_tied(press.composite_scores_per_head, int(press.composite_scores_per_head.numel() * (1 - ratio)))
    for layer in range(layers):
        for h in range(kv_heads):
            count = int(press.important_mask_per_kv_head[layer][h].sum())
            tied |= boundary_tied(press.scores[layer, h], count)
    model = types.SimpleNamespace(model=types.SimpleNamespace(layers=[types.SimpleNamespace(self_attn=types.SimpleNamespace())
                                                                         for _ in range(layers)]))
    press.compress_cache(model)
    for layer in range(layers):
        kept = [sorted(press.important_mask_per_kv_head[layer][h].nonzero().flatten().tolist()) for h in range(kv_heads)]
        if params.get("structured", True):
            # The cache itself was cut to the kept tokens: the same keys, in position order.
            for h in range(kv_heads):
                assert torch.equal(cache_layers[layer].keys[0, h], recorded_keys(recorded[layer], kv_heads, n, d)[h, kept[h]])
        else:
            _, heads_masked, positions = model.model.layers[layer].self_attn.masked_key_indices
            for h in range(kv_heads):
                assert sorted(set(range(n)) - set(positions[heads_masked == h].tolist())) == kept[h]
        recorded[layer]["kept"] = kept
    name = f"{key}_L{layers}_h{heads}_kv{kv_heads}_n{n}_r{ratio}_" + "_".join(f"{k}{v}" for k, v in params.items()) + f"_s{seed}"
    case = {"name": name, "policy": "kvpress:" + key, "params": params, "seed": seed, "layers": layers, "heads": heads,
            "kv_heads": kv_heads, "head_dim": d, "prompt_len": n, "budget": int(n * (1 - ratio)),
            "compression_ratio": ratio, "per_layer": recorded}
    return case, tied


def recorded_keys(layer, kv_heads, n, d):
    return torch.tensor(layer["k"]).reshape(kv_heads, n, d)


# (key, params, layers, heads, kv_heads, head_dim, context tokens, compression ratio): the registry's
# defaults, then each aggregation, the per-layer floor and no head mean.
CASES = [
    ("kvcompose", {}, 3, 4, 2, 8, 40, 0.5),
    ("kvcompose", {}, 2, 4, 4, 8, 33, 0.25),
    ("kvcompose", {}, 4, 8, 2, 8, 29, 0.75),
    ("kvcompose", {"agg_task": "mean", "agg_group": "max", "agg_head": "max"}, 3, 4, 2, 8, 36, 0.6),
    ("kvcompose", {"keep_token_lower_bound": 6, "add_mean_across_heads": False}, 3, 4, 2, 8, 30, 0.75),
    ("kvcompose_unstructured", {"structured": False}, 3, 4, 2, 8, 40, 0.5),
    ("kvcompose_unstructured", {"structured": False}, 2, 8, 4, 8, 35, 0.3),
    ("kvcompose_unstructured", {"structured": False, "agg_task": "mean", "keep_token_lower_bound": 3}, 3, 4, 2, 8, 31, 0.7),
]


def main():
    a = common.recorder_args()
    P = load_presses(a.reference)
    cases = []
    for i, (key, params, *shape) in enumerate(CASES):
        for seed in range(1000 * (i + 1), 1000 * (i + 1) + 300):  # the first seed without boundary ties
            case, tied = run_case(P, key, params, seed, *shape)
            if not tied:
                break
        assert not tied, case["name"]
        cases.append(case)
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_keys": ["kvcompose", "kvcompose_unstructured"]}
    common.write_cases(os.path.join(a.out_dir, "kvpress_kvcompose.json"), reference, cases)


if __name__ == "__main__":
    main()
