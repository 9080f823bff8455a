#!/usr/bin/env python3
"""Records what the official Cascading KV cache keeps, for tests/policies/cascade_parity_test.cpp.

Usage: python3 scripts/policy_parity/cascade.py REFERENCE_CHECKOUT [OUT_DIR]
  REFERENCE_CHECKOUT: a checkout of github.com/jeffwillette/cascading_kv_cache (tested at 76c89a4).
  OUT_DIR: default tests/fixtures/policy_parity.
Needs Debian's python3-torch and python3-numpy only.

Runs the reference's own attention and cache: CascadeAttention.forward (its eager path, which
computes the attention EMA and the incoming tokens' scores) on a CascadingKVCache with its
defaults (eager_fill=True, beta=0.9999999, pow2, mean over heads, homogeneous heads). The cache
update is a Triton kernel; triton_cpu.py interprets it on the CPU. The model around the
attention is replaced by the fixture: the projections return the stream's queries/keys, the
rotary embedding is the identity (positions play no part in the selection), and values carry
each token's position in their first component, so the kept tokens can be read back.
Tokens arrive one at a time (the streaming protocol): the reference weights a block's queries
differently from kvbench's block EMA (docs/policies-papers.md), so blocks are not compared.
"""
import importlib.util
import os
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_stubs  # noqa: E402
import triton_cpu  # noqa: E402
from streamed_attention import count_changed_steps, git_commit, make_stream, write_fixture  # noqa: E402

SINKS, BUDGET, CASCADES = 4, 24, 4  # |C| = 24 in four sub-caches of 6
N_TOKENS = 260


def load_reference(ref):
    triton_cpu.install()
    # The kernel launcher saves and restores the current CUDA device around the launch.
    torch.cuda.current_device = lambda: 0
    torch.cuda.set_device = lambda device: None
    reference_stubs.install_transformers_stub()
    reference_stubs.register_empty_package("cascade")
    reference_stubs.register_empty_package("cascade.models")
    reference_stubs.register_empty_package("cascade.models.flash_attention")
    modules = {}
    for name in ("cascading_cache", "cascade_attention"):
        spec = importlib.util.spec_from_file_location("cascade.models." + name,
                                                      os.path.join(ref, "cascade", "models", name + ".py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules["cascade.models." + name] = module
        spec.loader.exec_module(module)
        modules[name] = module
    return modules["cascading_cache"].CascadingKVCache, modules["cascade_attention"].CascadeAttention


def run_reference(classes, keys, queries, heads, kv_heads, perturb=None):
    CascadingKVCache, CascadeAttention = classes
    d = keys.size(-1)
    cache = CascadingKVCache(window_length=BUDGET // CASCADES, num_sink_tokens=SINKS, max_batch_size=1,
                             heads=kv_heads, dim=d, max_seq_len=BUDGET, device="cpu", dtype=torch.float32,
                             layers=1, verbose=False)
    cache.force_eager = True
    attn = CascadeAttention.__new__(CascadeAttention)
    torch.nn.Module.__init__(attn)
    attn.layer_idx, attn.num_heads, attn.head_dim = 0, heads, d
    attn.num_key_value_heads, attn.num_key_value_groups = kv_heads, heads // kv_heads
    attn.config = types.SimpleNamespace(_homogeneous_heads=True, _do_og_pos=False, _head_reduction="mean")
    attn.rope = lambda x, pos, cos=None, sin=None: (x, None, None)
    attn.o_proj = lambda x: x
    kept = []
    gen = torch.Generator().manual_seed(7)
    for p in range(N_TOKENS):
        q = queries[p].view(1, heads, 1, d)
        if perturb is not None:  # nudges the logits: every attention value moves by ~perturb relative
            q = q * (1 + perturb * torch.randn(q.shape, generator=gen))
        k = keys[p].view(1, kv_heads, 1, d)
        v = torch.zeros(1, kv_heads, 1, d)
        v[..., 0] = float(p)
        attn.qkv = lambda x, size, kv_size, q=q, k=k, v=v: (q, k, v)
        attn.forward(torch.zeros(1, 1, heads * d), past_key_value=cache)
        step = []
        for h in range(kv_heads):
            held = cache.value_cache[0][0, h][~cache.mask[0][0, h], 0].tolist()
            held += cache.sink_values[0][0, h][~cache.sink_mask[0][0, h], 0].tolist()
            step.append(sorted(int(x) for x in held))
        kept.append(step)
    return kept


def main():
    ref = os.path.abspath(sys.argv[1])
    out = sys.argv[2] if len(sys.argv) > 2 else "tests/fixtures/policy_parity"
    classes = load_reference(ref)
    for name, heads, kv_heads, seed in (("cascade_mha", 4, 4, 31), ("cascade_gqa", 8, 4, 32)):
        keys, queries = make_stream(seed, N_TOKENS, heads, kv_heads, head_dim=8)
        kept = run_reference(classes, keys, queries, heads, kv_heads)
        nudged = run_reference(classes, keys, queries, heads, kv_heads, perturb=1e-5)
        ties = count_changed_steps(kept, nudged)
        write_fixture(
            os.path.join(out, name + ".json"),
            reference={"script": __file__, "repo": "jeffwillette/cascading_kv_cache", "commit": git_commit(ref),
                       "class": "cascade/models/cascading_cache.py:CascadingKVCache + "
                                "cascade/models/cascade_attention.py:CascadeAttention (eager)"},
            policy="cascade", params={"sinks": SINKS, "cascades": CASCADES}, budget=BUDGET, heads=heads,
            kv_heads=kv_heads, head_dim=8, keys=keys, queries=queries, steps=[1] * N_TOKENS, kept=kept,
            near_ties=ties, notes="one token per step; homogeneous heads, mean over all query heads")
        sizes = [len(s[0]) for s in kept]
        print(f"{name}: sizes after 24/28/29/60/260 tokens: {sizes[23]} {sizes[27]} {sizes[28]} {sizes[59]} "
              f"{sizes[-1]}, near ties {ties}")


if __name__ == "__main__":
    main()
