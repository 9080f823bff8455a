#!/usr/bin/python3
"""kvpress parity fixture of DuoAttentionPress(on_the_fly_scoring=True) (registry key
duo_attention_on_the_fly): kvpress's own duo_attention_on_the_fly(model) run on the tiny random
Qwen3 checkpoint tests/fixtures/qwen3_reference (written by scripts/make_qwen3_reference.py) and a
corpus file in BookSum's shape, then post_init_from_model's streaming heads.

What kvpress's function touches is stood in for, nothing of it is copied:
  * model: the checkpoint's float32 weights behind the attributes it reads (config,
    model.layers[l].input_layernorm / .self_attn.q_proj / .k_proj / .head_dim, model.rotary_emb),
    and model(**inputs, output_hidden_states=True).hidden_states: the input of every layer (and the
    last layer's output), computed by the Qwen3 forward of make_qwen3_reference.py in float32;
  * transformers: AutoTokenizer (sentencepiece of the checkpoint's tokenizer.model, BOS first, as a
    Llama tokenizer's __call__ adds it), apply_rotary_pos_emb and the rotary embedding (the
    transformers formulas: cos/sin of position x inv_freq in float32, q*cos + rotate_half(q)*sin),
    Gemma3Attention / Qwen3Attention (classes the function tests the decoder layer against);
  * datasets.load_dataset("kmfoda/booksum", split="train").to_pandas(): the corpus JSONL written
    here, and DataFrame.sample(n, random_state=42) as pandas/core/sample.py draws it
    (np.random.RandomState(42).choice(len, n, replace=False), rows taken in that order; pandas is
    not installed here).
Recorded per case: the corpus file, num_samples, q_len, the sampled row indices, the token ids fed,
the scores [layers, kv_heads], and the streaming heads for a few head_compression_ratio values.
Also numpy's RandomState(seed).choice(n, k, replace=False) for a few (seed, n, k), for the C++
generator's own test.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_duo_on_the_fly.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out tests/fixtures/policy_parity/kvpress_duo_on_the_fly.json
"""
import json
import os
import struct
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import common  # noqa: E402
from kvpress_critical import load_presses  # noqa: E402
from kvpress_duo_attention import stub_imports  # noqa: E402
from make_qwen3_reference import rms_norm, rotate_half  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CHECKPOINT = os.path.join(ROOT, "tests", "fixtures", "qwen3_reference")
CORPUS = os.path.join(ROOT, "tests", "fixtures", "policy_parity", "duo_on_the_fly", "booksum_shaped.jsonl")


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        assert meta["dtype"] == "F32"
        a, b = meta["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[a:b]), dtype=torch.float32).reshape(meta["shape"])
    return out


class Linear:
    def __init__(self, weight):
        self.weight = weight

    def __call__(self, x):
        return x @ self.weight.T


class Norm:
    def __init__(self, weight, eps):
        self.weight, self.eps = weight, eps

    def __call__(self, x):
        return rms_norm(x, self.weight, self.eps)


class RotaryEmbedding:
    """transformers' default rotary embedding: float32 angles, cos/sin cast to the input's dtype."""

    def __init__(self, head_dim, theta):
        self.inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))

    def __call__(self, x, position_ids):
        freqs = (self.inv_freq[None, :, None].float() @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class StandInQwen3:
    """The checkpoint as kvpress's function sees a transformers Qwen3ForCausalLM."""

    def __init__(self, directory):
        with open(os.path.join(directory, "config.json")) as f:
            c = json.load(f)
        self.c = c
        w = read_safetensors(os.path.join(directory, "model.safetensors"))
        self.w = w
        self.device = "cpu"
        self.config = types.SimpleNamespace(name_or_path=directory, num_attention_heads=c["num_attention_heads"],
                                            num_key_value_heads=c["num_key_value_heads"],
                                            num_hidden_layers=c["num_hidden_layers"])
        eps = c["rms_norm_eps"]
        layers = []
        for l in range(c["num_hidden_layers"]):
            p = f"model.layers.{l}."
            attn = types.SimpleNamespace(q_proj=Linear(w[p + "self_attn.q_proj.weight"]), k_proj=Linear(w[p + "self_attn.k_proj.weight"]),
                                         head_dim=c["head_dim"], q_norm=Norm(w[p + "self_attn.q_norm.weight"], eps),
                                         k_norm=Norm(w[p + "self_attn.k_norm.weight"], eps))
            layers.append(types.SimpleNamespace(input_layernorm=Norm(w[p + "input_layernorm.weight"], eps), self_attn=attn))
        self.model = types.SimpleNamespace(layers=layers, rotary_emb=RotaryEmbedding(c["head_dim"], c["rope_theta"]))

    def __call__(self, input_ids, output_hidden_states):
        c, W = self.c, self.w
        ids = input_ids[0]
        T, H, KV, hd, eps = len(ids), c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
        cos, sin = self.model.rotary_emb(torch.zeros(1), torch.arange(T)[None])
        cos, sin = cos[0], sin[0]
        mask = torch.full((T, T), float("-inf")).triu(1)
        x = W["model.embed_tokens.weight"][ids]
        states = []
        for l in range(c["num_hidden_layers"]):
            states.append(x[None])
            p = f"model.layers.{l}."
            h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
            q = rms_norm((h @ W[p + "self_attn.q_proj.weight"].T).view(T, H, hd), W[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm((h @ W[p + "self_attn.k_proj.weight"].T).view(T, KV, hd), W[p + "self_attn.k_norm.weight"], eps)
            v = (h @ W[p + "self_attn.v_proj.weight"].T).view(T, KV, hd)
            q = q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]
            k = k * cos[:, None, :] + rotate_half(k) * sin[:, None, :]
            out = torch.empty(T, H, hd)
            for head in range(H):
                kv = head // (H // KV)
                out[:, head, :] = torch.softmax(q[:, head, :] @ k[:, kv, :].T / hd ** 0.5 + mask, -1) @ v[:, kv, :]
            x = x + out.reshape(T, H * hd) @ W[p + "self_attn.o_proj.weight"].T
            h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
            x = x + (torch.nn.functional.silu(h @ W[p + "mlp.gate_proj.weight"].T) * (h @ W[p + "mlp.up_proj.weight"].T)) \
                @ W[p + "mlp.down_proj.weight"].T
        states.append(rms_norm(x, W["model.norm.weight"], eps)[None])
        return types.SimpleNamespace(hidden_states=tuple(states))


class Inputs(dict):
    def to(self, device):
        return self


class Tokenizer:
    def __init__(self, directory):
        import sentencepiece
        self.sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(directory, "tokenizer.model"))
        self.fed = []

    def __call__(self, text, return_tensors):
        ids = [self.sp.bos_id()] + self.sp.encode(text)
        self.fed.append(ids)
        return Inputs(input_ids=torch.tensor([ids]))


class Frame:
    """The two DataFrame calls kvpress makes: sample(n, random_state=42) and ["chapter"].tolist()."""

    def __init__(self, rows, sampled=None):
        self.rows, self.sampled = rows, sampled

    def sample(self, n, random_state):
        locs = np.random.RandomState(random_state).choice(len(self.rows), size=n, replace=False)
        self.sampled.extend(int(i) for i in locs)
        return Frame([self.rows[i] for i in locs])

    def __getitem__(self, column):
        return types.SimpleNamespace(tolist=lambda: [r[column] for r in self.rows])


def write_corpus(path, rows):
    """A corpus in BookSum's shape (one record per chapter with its text under "chapter"), short
    chapters of random stories260K-vocabulary words so every one fits the checkpoint's context."""
    rng = np.random.RandomState(7)
    words = ["Once", "upon", "a", "time", "there", "was", "little", "girl", "named", "Lily", "She", "liked", "to",
             "play", "in", "the", "park", "with", "her", "dog", "One", "day", "saw", "big", "red", "ball", "and",
             "ran", "after", "it", "happy", "sun", "tree", "friend", "Tom", "said", "they", "went", "home"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for i in range(rows):
            n = int(rng.randint(5, 40))
            text = " ".join(words[int(j)] for j in rng.randint(0, len(words), size=n)) + "."
            f.write(json.dumps({"bid": i, "chapter": text}) + "\n")


def main():
    a = common.recorder_args("--out", "the fixture written")
    stub_imports()
    P = load_presses(a.reference)
    tokenizer = Tokenizer(CHECKPOINT)
    sys.modules["transformers"].AutoTokenizer = types.SimpleNamespace(from_pretrained=lambda name: tokenizer)
    sys.modules["transformers.models.llama.modeling_llama"].apply_rotary_pos_emb = apply_rotary_pos_emb
    write_corpus(CORPUS, 70)
    with open(CORPUS) as f:
        corpus = [json.loads(line) for line in f]
    sampled = []
    sys.modules["datasets"].load_dataset = lambda name, split: types.SimpleNamespace(to_pandas=lambda: Frame(corpus, sampled))
    duo = P("duo_attention_press")
    model = StandInQwen3(CHECKPOINT)
    cases = []
    for num_samples, q_len in ((50, 500), (7, 64), (1, 3)):
        sampled.clear()
        tokenizer.fed.clear()
        scores = duo.duo_attention_on_the_fly(model, num_samples, q_len)  # cachetools' cache is stubbed out
        case = {"num_samples": num_samples, "q_len": q_len, "sampled_rows": list(sampled), "token_ids": list(tokenizer.fed),
                "scores": scores.tolist(), "streaming": {}}
        if (num_samples, q_len) == (50, 500):  # the press's own defaults: post_init_from_model with on_the_fly_scoring
            for ratio in (0.25, 0.5, 0.75):
                press = duo.DuoAttentionPress(head_compression_ratio=ratio, on_the_fly_scoring=True)
                press.post_init_from_model(model)
                case["streaming"][str(ratio)] = [int(i) for i in np.flatnonzero(press.streaming_mask.numpy().reshape(-1))]
                case["sink_size"], case["recent_size"] = press.sink_size, press.recent_size
        cases.append(case)
    draws = [{"seed": s, "n": n, "k": k, "choice": [int(i) for i in np.random.RandomState(s).choice(n, size=k, replace=False)]}
             for s, n, k in ((42, 70, 50), (42, 9600, 50), (0, 5, 5), (7, 1, 1), (123456789, 100000, 20))]
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_key": "duo_attention_on_the_fly",
                 "checkpoint": "tests/fixtures/qwen3_reference", "corpus": os.path.relpath(CORPUS, os.path.join(ROOT, "tests", "fixtures")),
                 "numpy": np.__version__, "numpy_choice": draws}
    common.write_cases(a.out, reference, cases)


if __name__ == "__main__":
    main()
