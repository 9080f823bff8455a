#!/usr/bin/python3
"""kvpress parity fixture of KVzipPress (registry keys kvzip, kvzip_plus): kvpress's class run through
its own context manager on a stand-in model. Inside `with press(model)` the context is prefilled
(model.model.forward, which kvpress wraps to catch the ids and the cache); on leaving, kvpress builds
its repeat inputs (prepare(), with a chunk size small enough for several chunks) and feeds each to the
model, whose every layer appends the input's keys and values to the cache and calls kvpress's forward
hook with the input's queries (q_proj and RoPE identities), as transformers would; then
compress_post() marks what each layer masks. The tokenizer is a stand-in too: a string's tokens are
its UTF-8 bytes, and its chat template, when it has one, wraps a user message as
"<s>[INST] " + message + " [/INST]". kvpress's classes are imported from a checkout, never copied.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_kvzip.py --reference /tmp/kvpress_ref \
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity

Writes kvpress_kvzip.json: cases with policy, params (chunk_size among them), compression ratio,
"chat_template" (whether the stand-in tokenizer has one), the context "ids", per layer its "k" and
"v" [kv_heads, n, d], "repeats" (per repeat input: its "ids" and per layer "q" [heads, T, d], "k",
"v" [kv_heads, T, d]), "wo" (KVzip+: o_proj.weight [heads·d, heads·d]) and per layer "kept" (per KV
head, the positions not masked, ascending). Cases are drawn until no selection boundary is a tie.
"""
import functools
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from kvpress_critical import load_presses, module_for  # noqa: E402

TEMPLATE = ("<s>[INST] ", " [/INST]")


class ByteTokenizer:
    """A string's tokens are its UTF-8 bytes; an optional one-message chat template."""

    def __init__(self, chat):
        self.chat_template = "stand-in" if chat else None

    def encode(self, text, return_tensors=None, add_special_tokens=False):
        return torch.tensor([list(text.encode("utf-8"))], dtype=torch.long)

    def apply_chat_template(self, messages, add_generation_prompt, tokenize, enable_thinking):
        assert len(messages) == 1 and add_generation_prompt and not tokenize and enable_thinking is False
        return TEMPLATE[0] + messages[0]["content"] + TEMPLATE[1]


def rounded(gen, *shape, scale=1.0):
    return (torch.randn(*shape, generator=gen) * scale * 1000).round() / 1000


class StandInModel:
    """Per layer, the given context's keys and values at the prefill; for each later input, fresh
    queries, keys and values drawn from `gen`, appended to the cache, then kvpress's hook."""

    def __init__(self, press, gen, layers, heads, kv_heads, d, wo):
        self.press, self.gen, self.heads, self.kv_heads, self.d = press, gen, heads, kv_heads, d
        self.config = types.SimpleNamespace(name_or_path="stand-in", num_hidden_layers=layers, num_key_value_heads=kv_heads,
                                            num_attention_heads=heads)
        self.dtype, self.device = torch.float32, torch.device("cpu")
        modules = [module_for(heads, kv_heads, d, layer=l, layers=layers) for l in range(layers)]
        for m in modules:
            m.register_forward_hook = lambda *a, **k: types.SimpleNamespace(remove=lambda: None)
            if wo is not None:
                m.o_proj = types.SimpleNamespace(weight=wo)
                m.config.hidden_size = heads * d
        self.model = types.SimpleNamespace(layers=[types.SimpleNamespace(self_attn=m) for m in modules], rotary_emb=None)
        self.model.forward = self._prefill
        self.context, self.repeats = None, []

    def _prefill(self, input_ids, past_key_values):
        n = input_ids.shape[1]
        self.context = [{"k": rounded(self.gen, 1, self.kv_heads, n, self.d, scale=2.0), "v": rounded(self.gen, 1, self.kv_heads, n, self.d)}
                        for _ in self.model.layers]
        past_key_values.layers = [types.SimpleNamespace(keys=c["k"].clone(), values=c["v"].clone()) for c in self.context]

    def __call__(self, input_ids, past_key_values, num_logits_to_keep):
        T = input_ids.shape[1]
        record = {"ids": input_ids[0].tolist(), "layers": []}
        for layer in self.model.layers:
            module = layer.self_attn
            q, k, v = rounded(self.gen, 1, self.heads, T, self.d, scale=2.0), rounded(self.gen, 1, self.kv_heads, T, self.d, scale=2.0), \
                rounded(self.gen, 1, self.kv_heads, T, self.d)
            cache_layer = past_key_values.layers[module.layer_idx]
            cache_layer.keys, cache_layer.values = torch.cat([cache_layer.keys, k], 2), torch.cat([cache_layer.values, v], 2)
            kwargs = {"hidden_states": q.transpose(1, 2).reshape(1, T, self.heads * self.d), "past_key_values": past_key_values,
                      "position_embeddings": (torch.ones(1, T, self.d), torch.zeros(1, T, self.d))}
            self.press.forward_hook(module, [], kwargs, (None, None))
            record["layers"].append({"q": common.flat(q), "k": common.flat(k), "v": common.flat(v)})
        self.repeats.append(record)


def boundary_tied(values, k):
    s = torch.sort(values.reshape(-1)).values
    return 0 < k < s.numel() and s[k - 1].item() == s[k].item()


def run_case(P, key, params, chat, text, seed, layers, heads, kv_heads, d, ratio, chunk_size):
    gen = torch.Generator().manual_seed(seed)
    module = P("kvzip_press")
    module.AutoTokenizer = types.SimpleNamespace(from_pretrained=lambda name: ByteTokenizer(chat))
    press = module.KVzipPress(compression_ratio=ratio, **params)
    press.prepare = functools.partial(module.KVzipPress.prepare, press, chunk_size=chunk_size)
    wo = rounded(gen, heads * d, heads * d, scale=0.3) if params.get("kvzip_plus_normalization") else None
    model = StandInModel(press, gen, layers, heads, kv_heads, d, wo)
    tokenizer = ByteTokenizer(chat)
    context_text = (TEMPLATE[0] + text if chat else text)  # what the pipeline would have rendered before the question
    ids = tokenizer.encode(context_text)
    cache = types.SimpleNamespace(layers=[])
    spy = {}
    real_compress_post = press.compress_post

    def compress_post(m):  # keep score_val, which _reset_internal_parameters drops
        spy["scores"] = press.score_val.clone()
        real_compress_post(m)
    press.compress_post = compress_post
    with press(model):
        model.model.forward(input_ids=ids, past_key_values=cache)
    scores = spy["scores"][:, 0]  # [L, kv, n]
    n = ids.shape[1]
    tied = False
    if params.get("layerwise"):
        counts = [int(kv_heads * n * ratio)] * layers
    else:
        total = int(scores.numel() * ratio)
        tied |= boundary_tied(scores, total)
        counts = torch.bincount(torch.topk(-scores.reshape(-1), total).indices // (kv_heads * n), minlength=layers).tolist()
    per_layer = []
    for l, layer in enumerate(model.model.layers):
        tied |= boundary_tied(scores[l], counts[l])
        _, hs, ps = layer.self_attn.masked_key_indices
        kept = [sorted(set(range(n)) - set(ps[hs == h].tolist())) for h in range(kv_heads)]
        per_layer.append({"k": common.flat(model.context[l]["k"]), "v": common.flat(model.context[l]["v"]), "kept": kept})
    name = f"{key}_L{layers}_h{heads}_kv{kv_heads}_n{n}_r{ratio}_c{chunk_size}_{'chat' if chat else 'plain'}_" + \
        "_".join(f"{k}{v}" for k, v in params.items()) + f"_s{seed}"
    case = {"name": name, "policy": "kvpress:" + key, "params": dict(params, chunk_size=chunk_size), "seed": seed,
            "layers": layers, "heads": heads, "kv_heads": kv_heads, "head_dim": d, "prompt_len": n,
            "budget": int(n * (1 - ratio)), "compression_ratio": ratio, "chat_template": chat, "ids": ids[0].tolist(),
            "per_layer": per_layer, "repeats": model.repeats}
    if wo is not None:
        case["wo"] = common.flat(wo)
    return case, tied


TEXTS = ["Once upon a time, a cat sat on a warm mat.", "Tom had a red ball. He threw it high into the blue sky!"]
# (key, params, chat template, text, layers, heads, kv_heads, head_dim, ratio, chunk_size): several
# chunks each (the later ones start with the previous chunk's tail), with and without a template
# (whose prefix, longer than the sinks, scores 0), across layers and per layer, and KVzip+.
CASES = [
    ("kvzip", {}, False, TEXTS[0], 2, 4, 2, 4, 0.5, 16),
    ("kvzip", {}, True, TEXTS[1], 3, 4, 2, 4, 0.4, 20),
    ("kvzip", {"layerwise": True}, False, TEXTS[1], 2, 4, 4, 4, 0.6, 24),
    ("kvzip", {"n_sink": 2}, True, TEXTS[0], 2, 8, 2, 4, 0.3, 64),
    ("kvzip_plus", {"kvzip_plus_normalization": True}, False, TEXTS[0], 2, 4, 2, 4, 0.5, 16),
    ("kvzip_plus", {"kvzip_plus_normalization": True}, True, TEXTS[1], 2, 4, 4, 4, 0.7, 32),
]


def main():
    a = common.recorder_args()
    import logging
    logging.disable(logging.WARNING)  # kvpress's notes on untested models and KVzip's cost
    P = load_presses(a.reference)
    cases = []
    for i, (key, params, chat, text, *shape) in enumerate(CASES):
        for seed in range(1000 * (i + 1), 1000 * (i + 1) + 200):  # the first seed without boundary ties
            case, tied = run_case(P, key, params, chat, text, seed, *shape)
            if not tied:
                break
        assert not tied, case["name"]
        cases.append(case)
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_keys": ["kvzip", "kvzip_plus"]}
    common.write_cases(os.path.join(a.out_dir, "kvpress_kvzip.json"), reference, cases)


if __name__ == "__main__":
    main()
