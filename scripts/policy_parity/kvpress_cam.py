#!/usr/bin/python3
"""kvpress parity fixture of CAMPress (registry keys cam_knorm, cam_streaming_llm, cam_tova): kvpress's
class driven through its own forward hook, a prefill then decode steps on fixed tensors, as
transformers would call it (the cache's layers, cache_position, the step's attention weights).
At every compression the fixture holds the positions kept (the same on every KV head) and the values
left at them, which CAMPress rewrites (evicted values merged, with probability, into the kept tokens
after them). The Bernoulli draws come from torch's global generator seeded with the case's seed, as
kvbench's come from a CPU generator seeded with the job's. kvpress's classes are imported from a
checkout, never copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_cam.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity

Writes kvpress_cam.json: cases, each with its policy and params, "prompt" (per layer "k", "v"
[kv_heads, T, d]), "steps" (per decode step, per layer "q" [heads, d], "k" and "v" [kv_heads, d]) and
"compressions" ({"step", "layer", "kept": [positions ascending], "kept_values": [[value of each kept
position] per KV head]}); "draws" counts the merge draws whose probability was strictly between 0
and 1 and how many of them merged.
"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from kvpress_critical import load_presses, module_for  # noqa: E402


class BernoulliSpy:
    """Counts torch.bernoulli's draws with a probability strictly inside (0, 1), and their ones."""

    def __enter__(self):
        self.real, self.uncertain, self.merged = torch.bernoulli, 0, 0
        real = self.real

        def spy(p, *a, **kw):
            out = real(p, *a, **kw)
            inside = (p > 0) & (p < 1)
            self.uncertain += int(inside.sum())
            self.merged += int(out[inside].sum())
            return out
        torch.bernoulli = spy
        return self

    def __exit__(self, *exc):
        torch.bernoulli = self.real


def rounded(gen, *shape, scale=1.0):
    return (torch.randn(*shape, generator=gen) * scale * 1000).round() / 1000


def run_case(P, key, base, seed, layers, heads, kv_heads, d, T, steps, target, interval, merge_budget):
    gen = torch.Generator().manual_seed(seed)
    press = P("cam_press").CAMPress(base_press=base(P), compression_interval=interval, target_size=target,
                                    merge_budget=merge_budget)
    modules = [module_for(heads, kv_heads, d, layer=l, layers=layers) for l in range(layers)]
    prompt = [{"k": rounded(gen, 1, kv_heads, T, d, scale=2.0), "v": rounded(gen, 1, kv_heads, T, d)} for _ in range(layers)]
    cache = types.SimpleNamespace(layers=[types.SimpleNamespace(keys=p["k"].clone(), values=p["v"].clone()) for p in prompt])
    positions = [list(range(T)) for _ in range(layers)]
    rope = lambda n: (torch.ones(1, n, d), torch.zeros(1, n, d))  # noqa: E731  (q_proj and RoPE: identities)

    torch.manual_seed(seed)  # the only draws from torch's global generator are CAMPress's Bernoulli ones
    with BernoulliSpy() as draws:
        for l in range(layers):
            hidden = torch.zeros(1, T, heads * d)
            press.forward_hook(modules[l], [], {"hidden_states": hidden, "past_key_values": cache,
                                                "cache_position": torch.arange(T), "position_embeddings": rope(T)}, (None, None))
        recorded_steps, compressions = [], []
        for step in range(1, steps + 1):
            position = T + step - 1
            layer_inputs = []
            for l in range(layers):
                q, k, v = rounded(gen, 1, heads, 1, d, scale=2.0), rounded(gen, 1, kv_heads, 1, d, scale=2.0), rounded(gen, 1, kv_heads, 1, d)
                layer = cache.layers[l]
                layer.keys, layer.values = torch.cat([layer.keys, k], 2), torch.cat([layer.values, v], 2)
                positions[l].append(position)
                before = layer.keys.clone()
                kwargs = {"hidden_states": q.transpose(1, 2).reshape(1, 1, heads * d), "past_key_values": cache,
                          "cache_position": torch.tensor([position]), "position_embeddings": rope(1)}
                press.forward_hook(modules[l], [], kwargs, (None, common.causal_attention(q, layer.keys)))
                layer_inputs.append({"q": common.flat(q), "k": common.flat(k), "v": common.flat(v)})
                if layer.keys.shape[2] == before.shape[2]:
                    continue
                # Which tokens stayed: keys are never rewritten and every key here is distinct.
                index = {tuple(before[0, 0, i].tolist()): i for i in range(before.shape[2])}
                kept_slots = [index[tuple(layer.keys[0, 0, j].tolist())] for j in range(layer.keys.shape[2])]
                assert all(torch.equal(layer.keys[0, :, j], before[0, :, i]) for j, i in enumerate(kept_slots))
                positions[l] = [positions[l][i] for i in kept_slots]
                assert positions[l] == sorted(positions[l])
                compressions.append({"step": step, "layer": l, "kept": list(positions[l]),
                                     "kept_values": [[[round(x, 7) for x in layer.values[0, h, j].tolist()]
                                                      for j in range(layer.values.shape[2])] for h in range(kv_heads)]})
            recorded_steps.append(layer_inputs)
    params = {"compression_interval": interval, "merge_budget": merge_budget}
    return {"name": f"{key}_L{layers}_h{heads}_kv{kv_heads}_T{T}_B{target}_i{interval}_m{merge_budget}_s{seed}",
            "policy": "kvpress:" + key, "params": params, "seed": seed, "layers": layers, "heads": heads,
            "kv_heads": kv_heads, "head_dim": d, "prompt_len": T, "budget": target,
            "prompt": [{"k": common.flat(p["k"]), "v": common.flat(p["v"])} for p in prompt],
            "steps": recorded_steps, "compressions": compressions, "draws": [draws.uncertain, draws.merged]}


BASES = {
    "cam_knorm": lambda P: P("knorm_press").KnormPress(),
    "cam_streaming_llm": lambda P: P("streaming_llm_press").StreamingLLMPress(n_sink=4),
    "cam_tova": lambda P: P("tova_press").TOVAPress(),
}
# (layers, heads, kv_heads, head_dim, prompt, decode steps, target_size, interval, merge_budget): a
# prompt over the target (the first compression at the interval), one under it (the first when the
# cache passes the target, with more candidates than the interval), windows cut at the end of the
# kept tokens (merge_budget 32 > target), and interval 1 (CaM's own per-step form).
SHAPES = [(2, 4, 2, 8, 40, 13, 24, 5, 4), (1, 4, 4, 8, 20, 14, 24, 3, 3), (2, 8, 2, 8, 30, 9, 16, 4, 32),
          (1, 4, 2, 8, 28, 6, 20, 1, 5)]


def main():
    a = common.recorder_args()
    P = load_presses(a.reference)
    cases = []
    for key, base in BASES.items():
        for i, shape in enumerate(SHAPES):
            case = run_case(P, key, base, 100 * (i + 1) + len(cases), *shape)
            assert case["compressions"], case["name"]
            cases.append(case)
    uncertain = sum(c["draws"][0] for c in cases)
    merged = sum(c["draws"][1] for c in cases)
    assert 0 < merged < uncertain, (merged, uncertain)
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_keys": list(BASES)}
    common.write_cases(os.path.join(a.out_dir, "kvpress_cam.json"), reference, cases)
    print(f"{uncertain} draws with 0 < p < 1, {merged} merged")


if __name__ == "__main__":
    main()
