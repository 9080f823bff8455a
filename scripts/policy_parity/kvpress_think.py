#!/usr/bin/python3
"""kvpress parity fixtures of ThinKPress (registry key think) and ComposedPress([SnapKVPress(),
ThinKPress()]) (snap_think): ThinK zeroes each KV head's least important key channels, so each case
records the keys left at the kept positions besides the positions. kvpress's classes are imported
from a checkout, never copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_think.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity

ThinK re-projects its window queries from the hidden states (q_proj is the identity here, the
hidden states are q before RoPE laid out [1, T, H·d]) and rotates them with the layer's
position_embeddings: transformers' default Llama RoPE (half-split, theta 10000), as
kvpress_expected_attention.py. ComposedPress applies its presses one after the other on the layer's
cache; here their compress() are called in that order on the same tensors. Each case stores q and k
before RoPE, the values, the kept positions and "kept_keys" (rotated keys after ThinK, [[d floats]
per kept position, ascending] per KV head).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import kvpress_expected_attention as ea  # noqa: E402
from kvpress_critical import TopkSpy  # noqa: E402


def run_case(P, seed, name, heads, kv_heads, d, T, channel_ratio, think_window, snap_ratio, snap_window):
    gen = torch.Generator().manual_seed(seed)
    # Channels of unequal scale, so that the channel ranking is far from ties.
    scale = torch.rand(1, d, generator=gen) * 2 + 0.2
    q = (torch.randn(heads, T, d, generator=gen) * scale * 1000).round() / 1000
    k = (torch.randn(kv_heads, T, d, generator=gen) * scale.flip(1) * 1000).round() / 1000
    v = (torch.randn(kv_heads, T, d, generator=gen) * 1000).round() / 1000
    cos, sin = ea.rope_cos_sin(torch.arange(T), d)
    q_rot, k_rot = ea.rotate(q, cos[0], sin[0]), ea.rotate(k, cos[0], sin[0])
    module = ea.Module(heads, kv_heads, d)
    module.num_key_value_groups = heads // kv_heads
    hidden = q.transpose(0, 1).reshape(1, T, heads * d)
    kwargs = {"hidden_states": hidden, "position_embeddings": (cos, sin)}
    keys, values = k_rot.unsqueeze(0).clone(), v.unsqueeze(0).clone()
    order = [list(range(T)) for _ in range(kv_heads)]  # the position of each row of keys, per head
    params = {"key_channel_compression_ratio": channel_ratio, "think_window_size": think_window}
    if snap_ratio is not None:  # ComposedPress: SnapKV first, ThinK on the keys it kept
        snap = P("kvpress.presses.snapkv_press").SnapKVPress(compression_ratio=snap_ratio, window_size=snap_window,
                                                            kernel_size=5)
        attentions = common.causal_attention(q_rot.unsqueeze(0), keys)
        with TopkSpy() as spy:
            keys, values = snap.compress(module, hidden, keys, values, attentions, kwargs)
        order = spy.calls[-1][2][0].tolist()  # the gather's rows, in topk order
        params.update({"window_size": snap_window, "kernel_size": 5})
    think = P("kvpress.presses.think_press").ThinKPress(key_channel_compression_ratio=channel_ratio,
                                                        window_size=think_window)
    keys, values = think.compress(module, hidden, keys, values, None, kwargs)
    kept, kept_keys = [], []
    for h in range(kv_heads):
        rows = sorted(range(len(order[h])), key=lambda i: order[h][i])
        kept.append([order[h][i] for i in rows])
        kept_keys.append([[round(x, 6) for x in keys[0, h, i].tolist()] for i in rows])
    case = {"name": name, "seed": seed, "heads": heads, "kv_heads": kv_heads, "head_dim": d, "layers": 1,
            "prompt_len": T, "rope_theta": ea.THETA, "policy": "kvpress:snap_think" if snap_ratio is not None else "kvpress:think",
            "params": params, "q": common.flat(q), "k": common.flat(k), "v": common.flat(v), "kept": kept,
            "kept_keys": kept_keys}
    # ThinK alone keeps every token: the job's budget is "full".
    case["budget"] = int(T * (1 - snap_ratio)) if snap_ratio is not None else T
    if snap_ratio is not None:
        case["compression_ratio"] = snap_ratio
    return case


# (name, heads, kv_heads, d, T, key_channel_compression_ratio, think window, SnapKV ratio, SnapKV window)
CASES = [
    ("think_mha_c05", 4, 4, 8, 40, 0.5, 32, None, None),
    ("think_gqa42_c025_w8", 4, 2, 16, 48, 0.25, 8, None, None),
    ("think_gqa82_c075", 8, 2, 8, 36, 0.75, 32, None, None),
    ("think_gqa42_short", 4, 2, 8, 20, 0.5, 32, None, None),  # prompt shorter than the window
    ("snap_think_gqa42", 4, 2, 8, 48, 0.5, 8, 0.5, 8),
    ("snap_think_mha_c025", 4, 4, 16, 56, 0.25, 16, 0.75, 8),
    ("snap_think_gqa82", 8, 2, 8, 60, 0.75, 32, 0.25, 8),
]


def main():
    a = common.recorder_args()
    P = ea.load_presses(a.reference)
    cases = [run_case(P, 7000 + i, *c) for i, c in enumerate(CASES)]
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_keys": ["think", "snap_think"]}
    out = os.path.join(a.out_dir, "kvpress_think.json")
    common.write_cases(out, reference, cases)


if __name__ == "__main__":
    main()
