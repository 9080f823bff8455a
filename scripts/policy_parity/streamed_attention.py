"""Shared pieces of the pol-b parity scripts (buzz.py, cascade.py, roco_easykv.py).

A fixture is a stream of tokens, each with one key per KV head and one query per query head
(random, fixed seed), fed in blocks ("steps"). At every step the new tokens attend causally to
the tokens the cache still holds plus themselves: softmax(q.k / sqrt(d)) in float32, no rotary
embedding (the selection is what is compared, positions play no part in it). The reference
decides what to keep; the kept original positions per KV head after every step are recorded.
tests/policies/*_parity_test.cpp replay the same stream through kvbench's attention and policy.

Stability: a fixture is only useful if tiny float differences between PyTorch here and libtorch
in the test cannot flip a decision, so every script replays the reference with the attention
perturbed by a relative 1e-5 and counts the steps whose kept sets change (`near_ties`).
"""
import json
import math
import os
import subprocess

import numpy as np
import torch


def make_stream(seed, n_tokens, heads, kv_heads, head_dim, scale=1.6):
    g = torch.Generator().manual_seed(seed)
    keys = (torch.randn(n_tokens, kv_heads, head_dim, generator=g) * scale).float()
    queries = (torch.randn(n_tokens, heads, head_dim, generator=g) * scale).float()
    return keys, queries


def attention(queries, keys, cached_positions, new_positions):
    """Attention of the new tokens' queries over one KV head's cached tokens then the new ones.

    queries: [T, g, d] (the query heads of this KV head), keys: [N, d] (the stream's keys of this
    KV head), cached_positions: list of positions in cache order. Returns [g, T, n] float32 where
    n = len(cached) + T, columns in the order cached..., new....
    """
    order = list(cached_positions) + list(new_positions)
    k = keys[order]                                     # [n, d]
    q = queries.transpose(0, 1)                         # [g, T, d]
    scores = torch.matmul(q, k.t()) * (1.0 / math.sqrt(k.size(-1)))
    T, n = len(new_positions), len(order)
    allowed = torch.arange(n).unsqueeze(0) <= (torch.arange(T).unsqueeze(1) + (n - T))
    scores = scores.masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1)


def git_commit(path):
    try:
        return subprocess.check_output(["git", "-C", path, "rev-parse", "HEAD"], text=True).strip()
    except Exception:
        return None


def write_fixture(path, *, reference, policy, params, budget, heads, kv_heads, head_dim, keys, queries, steps,
                  kept, near_ties, notes):
    fixture = {
        "generated_by": "scripts/policy_parity/" + os.path.basename(reference["script"]),
        "reference": {k: v for k, v in reference.items() if k != "script"},
        "notes": notes,
        "policy": policy,
        "params": params,
        "budget": budget,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        # float32 values written as the doubles they are: parsed back bit for bit.
        "keys": [[[float(x) for x in head] for head in tok] for tok in keys.numpy().astype(np.float32)],
        "queries": [[[float(x) for x in head] for head in tok] for tok in queries.numpy().astype(np.float32)],
        "steps": steps,
        "kept": kept,
        "near_ties": near_ties,
    }
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")


def count_changed_steps(a, b):
    return sum(1 for x, y in zip(a, b) if x != y)
