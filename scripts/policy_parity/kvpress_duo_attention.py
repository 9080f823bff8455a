#!/usr/bin/python3
"""kvpress parity fixture of DuoAttentionPress (registry key duo_attention) on a real published
pattern: mit-han-lab/duo-attention's attn_patterns for Meta-Llama-3.1-8B-Instruct (32 layers × 8
KV heads; tests/fixtures/duo_attention/, PROVENANCE.md there). kvpress's load_attention_pattern
reads it through a stand-in for requests.get that serves those two files; post_init_from_model
picks the streaming heads, compress() masks their middle tokens. Recorded: the streaming mask per
head_compression_ratio, numpy's tie group at its boundary (np.argsort's order among equal scores is
not specified: x86-simd-sort, introsort), and the masked positions of a few layers.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_duo_attention.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out tests/fixtures/policy_parity/kvpress_duo_attention.json
"""
import json
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from kvpress_critical import load_presses, module_for  # noqa: E402

PATTERN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "duo_attention")
NAME = "meta-llama/Meta-Llama-3.1-8B-Instruct"


def stub_imports():
    """What duo_attention_press.py imports beyond torch and numpy; requests serves the local files."""
    requests = types.ModuleType("requests")

    def get(url):
        with open(os.path.join(PATTERN_DIR, url.rsplit("/", 1)[-1])) as f:
            text = f.read()
        return types.SimpleNamespace(text=text, json=lambda: json.loads(text))
    requests.get = get
    sys.modules["requests"] = requests
    cachetools = types.ModuleType("cachetools")
    cachetools.LRUCache = lambda maxsize: {}
    cachetools.cached = lambda cache, key: (lambda f: f)
    sys.modules["cachetools"] = cachetools
    datasets = types.ModuleType("datasets")
    datasets.load_dataset = None
    sys.modules["datasets"] = datasets


def main():
    a = common.recorder_args("--out", "the fixture written")
    stub_imports()
    P = load_presses(a.reference)
    Duo = P("duo_attention_press").DuoAttentionPress
    model = types.SimpleNamespace(config=types.SimpleNamespace(name_or_path=NAME), device="cpu")
    cases = []
    for ratio in (0.0, 0.25, 0.5, 0.625, 0.9):
        press = Duo(head_compression_ratio=ratio)
        press.post_init_from_model(model)
        _, _, scores = Duo.load_attention_pattern(model)
        n_pruned = round(scores.size * ratio)
        flat = np.sort(scores, axis=None)
        # Heads whose score equals the boundary one: numpy may pick any of them.
        ties = []
        if 0 < n_pruned < scores.size and flat[n_pruned - 1] == flat[n_pruned]:
            ties = [int(i) for i in np.flatnonzero(scores.reshape(-1) == flat[n_pruned - 1])]
        layers = []
        for layer, k_len in ((0, 600), (5, 385), (17, 384), (31, 2000)):
            module = module_for(32, 8, 4, layer, 32)
            module.masked_key_indices = None
            keys = torch.zeros(1, 8, k_len, 4)
            press.compress(module, None, keys, keys, None, {})
            masked = [[] for _ in range(8)]
            if module.masked_key_indices is not None:
                _, hs, ps = module.masked_key_indices
                for h, p in zip(hs.tolist(), ps.tolist()):
                    masked[h].append(p)
            layers.append({"layer": layer, "k_len": k_len, "masked": [sorted(m) for m in masked]})
        cases.append({"head_compression_ratio": ratio, "sink_size": press.sink_size, "recent_size": press.recent_size,
                      "streaming": [int(i) for i in np.flatnonzero(press.streaming_mask.numpy().reshape(-1))],
                      "boundary_ties": ties, "layers": layers})
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_key": "duo_attention",
                 "pattern": "mit-han-lab/duo-attention fe93c31 attn_patterns/Meta-Llama-3.1-8B-Instruct/"
                            "lr=0.02-reg=0.05-ctx=1000_128000-multi_passkey10"}
    common.write_cases(a.out, reference, cases)


if __name__ == "__main__":
    main()
