"""Shared helpers of the policy parity scripts (tests/policies/policy_parity_test.cpp).

Each script runs a policy's OFFICIAL Python code, imported from a checkout given on the command
line (never copied into kvbench), on fixed random queries/keys, and writes the fixture JSON with
the positions every stored head keeps. Needs only Debian's python3-torch and python3-numpy:
`transformers` and `flash_attn` are replaced by the tiny stand-ins below (the reference classes
used here touch only Cache/DynamicCache and repeat_kv-style helpers).

Fixture layout (read by the C++ test):
  {"policy", "params", "reference": {...}, "cases": [
     {"name", "heads", "kv_heads", "head_dim", "layers", "budget", "prompt_len",
      "steps": [{"tokens": T, "phase": "prefill"|"block"|"decode", "compress": bool,
                 "layers": [{"q": [H*T*d floats], "k": [kvh*T*d floats],
                             "kept": [[positions] per stored head],
                             "ties": [[positions tied at the selection boundary] per stored head]}]}]}]}
"""
import json
import math
import sys
import types

import torch


def install_stubs():
    """Registers stand-ins for transformers/flash_attn so the reference modules import."""
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)

        def missing(attr):  # any other name: a placeholder class (only used in definitions)
            if attr.startswith("__"):
                raise AttributeError(attr)
            return type(attr, (), {"__init__": lambda self, *a, **k: None})
        m.__getattr__ = missing
        sys.modules[name] = m
        return m

    class Cache:
        def __init__(self, *args, **kwargs):
            pass

    class DynamicCache(Cache):
        def __init__(self, *args, **kwargs):
            super().__init__()
            self.key_cache, self.value_cache = [], []

        def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
            if len(self.key_cache) <= layer_idx:
                self.key_cache.append(key_states)
                self.value_cache.append(value_states)
            else:
                self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key_states], dim=-2)
                self.value_cache[layer_idx] = torch.cat([self.value_cache[layer_idx], value_states], dim=-2)
            return self.key_cache[layer_idx], self.value_cache[layer_idx]

    cache_utils = {"Cache": Cache, "DynamicCache": DynamicCache}

    class StubFinder:
        """Any transformers.* / flash_attn* import gets a stub module (placeholders for the names
        the reference files only use in class definitions or type hints)."""
        def find_spec(self, fullname, path=None, target=None):
            import importlib.machinery
            if fullname.split(".")[0] in ("transformers", "flash_attn"):
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec):
            attrs = cache_utils if spec.name == "transformers.cache_utils" else {}
            m = module(spec.name, **attrs)
            m.__path__ = []
            return m

        def exec_module(self, m):
            pass

    sys.meta_path.insert(0, StubFinder())


def rand_qk(gen, heads, kv_heads, tokens, head_dim, scale=2.0):
    """Queries [1, H, T, d] and keys [1, kvh, T, d], float32, spread enough for peaked attention."""
    q = torch.randn(1, heads, tokens, head_dim, generator=gen) * scale
    k = torch.randn(1, kv_heads, tokens, head_dim, generator=gen) * scale
    # Three decimals: the JSON stays short and holds exactly the float32 values used here.
    return (q * 1000).round() / 1000, (k * 1000).round() / 1000


def position_values(kv_heads, first, tokens, head_dim):
    """Values whose first feature is the token's position: what a reference keeps can be read off
    its value cache."""
    v = torch.zeros(1, kv_heads, tokens, head_dim)
    v[..., 0] = torch.arange(first, first + tokens, dtype=torch.float32)
    return v


def repeat_kv(x, n_rep):
    b, h, t, d = x.shape
    return x if n_rep == 1 else x[:, :, None].expand(b, h, n_rep, t, d).reshape(b, h * n_rep, t, d)


def causal_attention(q, k_cache):
    """Softmax attention of the T newest queries over n cached keys (the T newest are the new
    tokens), float32, as the models compute it before handing weights to the policies."""
    heads, T, d = q.shape[1], q.shape[2], q.shape[3]
    k = repeat_kv(k_cache, heads // k_cache.shape[1])
    n = k.shape[2]
    w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(d)
    rows = torch.arange(T).unsqueeze(1)
    cols = torch.arange(n).unsqueeze(0)
    w = w.masked_fill(cols > rows + (n - T), float("-inf"))
    return torch.softmax(w, dim=-1, dtype=torch.float32)


def kept_positions(values):
    """[1, heads, n, d] value cache -> per-head sorted list of positions."""
    return [sorted(int(round(x)) for x in values[0, h, :, 0].tolist()) for h in range(values.shape[1])]


def boundary_ties(scores, k, eps=0.0):
    """Per row of `scores` [rows, n]: the indices whose score equals (within eps) the k-th largest
    when that tie group straddles the top-k boundary (the reference's choice among them is
    unspecified); empty when the boundary is strict."""
    out = []
    for row in scores:
        n = row.numel()
        if k <= 0 or k >= n:
            out.append([])
            continue
        s = torch.sort(row, descending=True).values
        kth, nxt = s[k - 1].item(), s[k].item()
        if abs(kth - nxt) <= eps * max(1.0, abs(kth)):
            out.append([i for i in range(n) if abs(row[i].item() - kth) <= eps * max(1.0, abs(kth))])
        else:
            out.append([])
    return out


def flat(t):
    """Short decimal text whose float32 value is exactly the tensor's (three-decimal) value."""
    return [float("%.3f" % x) for x in t.reshape(-1).tolist()]


def write(path, policy, params, reference, cases):
    with open(path, "w") as f:
        json.dump({"policy": policy, "params": params, "reference": reference, "cases": cases}, f,
                  separators=(",", ":"))
        f.write("\n")
    total = sum(len(c["steps"]) for c in cases)
    ties = sum(1 for c in cases for s in c["steps"] for l in s["layers"] for t in l.get("ties", []) if t)
    print(f"{path}: {len(cases)} cases, {total} steps, {ties} head selections with boundary ties")


def write_cases(path, reference, cases):
    """A fixture whose cases name their own policy and layout (no common "policy" and "params")."""
    with open(path, "w") as f:
        json.dump({"reference": reference, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {len(cases)} cases")


def load_module(path, name):
    """Imports the reference file at `path` as module `name` (by path: our scripts' names would
    shadow the references' packages)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def adakv_kept(module, kv_heads, T):
    """The positions each KV head keeps after kvpress's AdaKVPress: all but module.masked_key_indices."""
    _, hs, ps = module.masked_key_indices
    pruned = [set() for _ in range(kv_heads)]
    for h, p in zip(hs.tolist(), ps.tolist()):
        pruned[h].add(p)
    return [sorted(set(range(T)) - pruned[h]) for h in range(kv_heads)]


def adakv_guarded(scores, n_kept, alpha):
    """AdaKVPress's safeguard on [kv_heads, T] scores: each head's int(n_kept·alpha) best raised to the
    dtype's max (then the layer's lowest are evicted across heads). Returns (n_safe, guarded)."""
    n_safe = int(n_kept * alpha)
    guarded = scores.clone()
    if n_safe > 0:
        guarded.scatter_(-1, torch.topk(scores, n_safe, dim=-1).indices, torch.finfo(scores.dtype).max)
    return n_safe, guarded


def recorder_args(out="--out-dir", out_help="folder of the fixtures written"):
    """The command line every kvpress recorder takes: the checkout, its commit, where to write."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="checkout of NVIDIA/kvpress")
    ap.add_argument("--commit", required=True)
    ap.add_argument(out, required=True, help=out_help)
    return ap.parse_args()

