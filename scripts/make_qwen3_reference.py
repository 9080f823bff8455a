#!/usr/bin/env python3
"""A tiny random Qwen3 checkpoint and the logits of an independent Qwen3 forward pass, the
reference tests/models/qwen3_test.cpp holds kvbench's Qwen3 support to.

transformers is not installable in this environment (no PyPI), so the reference is a from-scratch
PyTorch forward written here from the Qwen3 equations (transformers' modeling_qwen3), in float64:
  x = embed[ids]
  per layer:
    h = RMSNorm(x; input_layernorm)
    q = (h Wq^T).view(T, H, hd);  k = (h Wk^T).view(T, KV, hd);  v = (h Wv^T).view(T, KV, hd)   (no bias)
    q = RMSNorm_over_hd(q; q_norm);  k = RMSNorm_over_hd(k; k_norm)     <- per head, BEFORE RoPE
    q, k = RoPE(q, k) with rotate_half, inv_freq = theta^(-2i/hd)
    attention with causal mask, scale 1/sqrt(hd), each KV head shared by H/KV query heads
    x = x + attn Wo^T;  h = RMSNorm(x; post_attention_layernorm);  x = x + down(silu(gate(h)) * up(h))
  logits = RMSNorm(x; norm) lm_head^T   (lm_head = embed_tokens when tie_word_embeddings)
with RMSNorm(x; w) = w * x / sqrt(mean(x^2) + eps). head_dim (16) differs from
hidden_size / num_attention_heads (8), as in real Qwen3 models (head_dim 128 by default).

Usage: python3 scripts/make_qwen3_reference.py tests/fixtures/qwen3_reference ../shared/models/stories260K/tok512.model
Writes config.json, model.safetensors (written by hand: 8-byte header length, JSON header, F32
data), tokenizer.model, reference.json ({"input_ids", "greedy_prompt_len", "greedy_ids"}) and
reference_logits.safetensors (float32 [T, vocab]).
"""
import json
import os
import shutil
import struct
import sys

import torch

CONFIG = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 512, "hidden_size": 32,
    "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 16, "hidden_act": "silu", "max_position_embeddings": 256, "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0, "rope_scaling": None, "attention_bias": False, "tie_word_embeddings": True,
    "use_sliding_window": False, "torch_dtype": "float32",
}


def write_safetensors(path, tensors):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        data = t.to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def random_weights(c, g):
    d, hd, H, KV, I = c["hidden_size"], c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"]
    w = {"model.embed_tokens.weight": torch.randn(c["vocab_size"], d, generator=g) * 0.5,
         "model.norm.weight": torch.rand(d, generator=g) + 0.5}
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = torch.rand(d, generator=g) + 0.5
        w[p + "self_attn.q_proj.weight"] = torch.randn(H * hd, d, generator=g) * 0.3
        w[p + "self_attn.k_proj.weight"] = torch.randn(KV * hd, d, generator=g) * 0.3
        w[p + "self_attn.v_proj.weight"] = torch.randn(KV * hd, d, generator=g) * 0.3
        w[p + "self_attn.o_proj.weight"] = torch.randn(d, H * hd, generator=g) * 0.3
        # Far from ones, and different per dimension, so applying them at the wrong place shows.
        w[p + "self_attn.q_norm.weight"] = torch.rand(hd, generator=g) * 1.5 + 0.25
        w[p + "self_attn.k_norm.weight"] = torch.rand(hd, generator=g) * 1.5 + 0.25
        w[p + "post_attention_layernorm.weight"] = torch.rand(d, generator=g) + 0.5
        w[p + "mlp.gate_proj.weight"] = torch.randn(I, d, generator=g) * 0.3
        w[p + "mlp.up_proj.weight"] = torch.randn(I, d, generator=g) * 0.3
        w[p + "mlp.down_proj.weight"] = torch.randn(d, I, generator=g) * 0.3
    return w


def rms_norm(x, weight, eps):
    return weight * (x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def forward(c, w, ids):
    W = {k: v.to(torch.float64) for k, v in w.items()}
    T, H, KV, hd, eps = len(ids), c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
    inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    angles = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    cos, sin = torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()  # [T, hd]
    mask = torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)
    x = W["model.embed_tokens.weight"][torch.tensor(ids)]
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = (h @ W[p + "self_attn.q_proj.weight"].T).view(T, H, hd)
        k = (h @ W[p + "self_attn.k_proj.weight"].T).view(T, KV, hd)
        v = (h @ W[p + "self_attn.v_proj.weight"].T).view(T, KV, hd)
        q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps)  # over hd, each head on its own
        k = rms_norm(k, W[p + "self_attn.k_norm.weight"], eps)
        q = q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]
        k = k * cos[:, None, :] + rotate_half(k) * sin[:, None, :]
        out = torch.empty(T, H, hd, dtype=torch.float64)
        for head in range(H):
            kv = head // (H // KV)
            scores = q[:, head, :] @ k[:, kv, :].T / hd ** 0.5 + mask
            out[:, head, :] = torch.softmax(scores, -1) @ v[:, kv, :]
        x = x + out.reshape(T, H * hd) @ W[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate = h @ W[p + "mlp.gate_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * (h @ W[p + "mlp.up_proj.weight"].T)) @ W[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, W["model.norm.weight"], eps)
    return x @ W["model.embed_tokens.weight"].T


def main(out, tokenizer):
    os.makedirs(out, exist_ok=True)
    g = torch.Generator().manual_seed(3)
    w = random_weights(CONFIG, g)
    ids = [1] + torch.randint(3, CONFIG["vocab_size"], (31,), generator=g).tolist()
    logits = forward(CONFIG, w, ids)
    greedy, seq = [], ids[:12]
    for _ in range(20):  # full recompute each step: no cache in the reference
        nxt = int(forward(CONFIG, w, seq)[-1].argmax())
        greedy.append(nxt)
        seq = seq + [nxt]
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    write_safetensors(os.path.join(out, "model.safetensors"), w)
    write_safetensors(os.path.join(out, "reference_logits.safetensors"), {"logits": logits.to(torch.float32)})
    shutil.copy(tokenizer, os.path.join(out, "tokenizer.model"))
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump({"input_ids": ids, "greedy_prompt_len": 12, "greedy_ids": greedy,
                   "reference": "scripts/make_qwen3_reference.py (from-scratch float64 PyTorch Qwen3 forward)",
                   "torch": torch.__version__}, f, indent=1)
    print("wrote", out, "logit range", float(logits.min()), float(logits.max()), "greedy", greedy)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
