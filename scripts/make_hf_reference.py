#!/usr/bin/env python3
"""Writes tiny random Llama-family checkpoints with Hugging Face transformers itself, plus the
logits and greedy continuation transformers computes for them: the reference that
tests/models/hf_reference_test.cpp holds kvbench's HF loader and transformer to.

Run where transformers is installed (the GPU machine has it):
    python3 scripts/make_hf_reference.py tests/fixtures/hf_reference ../shared/models/stories260K/tok512.model
Each case is one folder: config.json, model.safetensors, tokenizer.model, reference.json
({"input_ids", "greedy_ids", "transformers"}) and reference_logits.safetensors (float32 [T, vocab]).
"""
import json
import os
import shutil
import sys

import torch
import transformers
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config

SMALL = dict(vocab_size=512, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, rms_norm_eps=1e-5, initializer_range=0.3, hidden_act="silu")


def rope(kind, **kw):
    return {"rope_type": kind, **kw}


CASES = {
    # Llama-3.1-style: theta 500000 and llama3 scaling with a small original context so it bites.
    "llama3_scaled": (LlamaConfig, dict(max_position_embeddings=256, tie_word_embeddings=False,
                                        rope=dict(rope_theta=500000.0, **rope("llama3", factor=8.0, low_freq_factor=1.0,
                                                  high_freq_factor=4.0, original_max_position_embeddings=16)))),
    "llama_linear": (LlamaConfig, dict(max_position_embeddings=256, tie_word_embeddings=True,
                                       rope=dict(rope_theta=10000.0, **rope("linear", factor=4.0)))),
    # Dynamic NTK only changes anything past max_position_embeddings: the inputs are longer.
    "llama_dynamic": (LlamaConfig, dict(max_position_embeddings=24, tie_word_embeddings=False,
                                        rope=dict(rope_theta=10000.0, **rope("dynamic", factor=2.0)))),
    "mistral": (MistralConfig, dict(max_position_embeddings=256, tie_word_embeddings=False, sliding_window=None,
                                    rope=dict(rope_theta=1000000.0, **rope("default")))),
    "qwen2": (Qwen2Config, dict(max_position_embeddings=256, tie_word_embeddings=True,
                                rope=dict(rope_theta=1000000.0, **rope("default")))),
    # Qwen3: q_norm/k_norm per head before RoPE, no qkv bias, head_dim 16 != hidden/heads.
    "qwen3": (Qwen3Config, dict(max_position_embeddings=256, tie_word_embeddings=True, head_dim=16,
                                rope=dict(rope_theta=1000000.0, **rope("default")))),
}


def make_config(cls, spec):
    spec = dict(spec)
    rope_spec = spec.pop("rope")
    theta = rope_spec["rope_theta"]
    kwargs = {**SMALL, **spec}
    try:  # transformers >= 5: rope_parameters holds theta and scaling together
        return cls(**kwargs, rope_parameters=dict(rope_spec))
    except TypeError:
        scaling = {k: v for k, v in rope_spec.items() if k != "rope_theta"}
        return cls(**kwargs, rope_theta=theta, rope_scaling=None if scaling["rope_type"] == "default" else scaling)


def randomise(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(torch.rand(p.shape, generator=g) + 0.5)
            elif name.endswith(".bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.3)


def main(out_root, tokenizer):
    torch.manual_seed(0)
    for index, (name, (cls, spec)) in enumerate(CASES.items()):
        out = os.path.join(out_root, name)
        os.makedirs(out, exist_ok=True)
        torch.manual_seed(100 + index)
        config = make_config(cls, spec)
        model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32).eval()
        randomise(model, 200 + index)
        model.save_pretrained(out, safe_serialization=True)
        shutil.copy(tokenizer, os.path.join(out, "tokenizer.model"))
        g = torch.Generator().manual_seed(300 + index)
        length = 40 if name == "llama_dynamic" else 32
        ids = [1] + torch.randint(3, 512, (length - 1,), generator=g).tolist()
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].float().contiguous()
            greedy = model.generate(torch.tensor([ids[:12]]), max_new_tokens=20, do_sample=False,
                                    pad_token_id=0, eos_token_id=None)[0, 12:].tolist()
        save_file({"logits": logits}, os.path.join(out, "reference_logits.safetensors"))
        with open(os.path.join(out, "reference.json"), "w") as f:
            json.dump({"input_ids": ids, "greedy_prompt_len": 12, "greedy_ids": greedy,
                       "transformers": transformers.__version__, "torch": torch.__version__}, f, indent=1)
        print(name, "saved", sorted(os.listdir(out)), "logit range", float(logits.min()), float(logits.max()))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
