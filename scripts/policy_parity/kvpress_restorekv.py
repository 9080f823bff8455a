#!/usr/bin/python3
"""kvpress parity fixture of RestoreKVPress (registry keys RestoreKV, RestoreKV_plus): kvpress's class
run through its own context manager, as kvpress's pipeline runs a press, on the tiny random Qwen3
checkpoint tests/fixtures/qwen3_reference with published-format artefacts written here:

  restorekv/ and restorekv_plus/ (one per registry key, as the hub's higokri/RestoreKV-<model>[_plus]):
    restore_embeddings.safetensors  tensor "restore_embeddings" [N, hidden] float32
    adapter_config.json             a PEFT LoRA config as peft's save_pretrained writes it
    adapter_model.safetensors       base_model.model.model.layers.<l>.<self_attn|mlp>.<proj>.lora_{A,B}.weight

Inside `with press(model)` the context is prefilled (model.model.forward, which KVzip wraps); on
leaving, kvpress runs its repeat inputs through the model (its forward hooks score the context), then
RestoreKVPress.compress_post appends the restore embeddings through model.model with the adapter
enabled, and KVzip's compress_post marks what each layer masks with the raised ratio. The question
is then fed at positions after the restore tokens, as kvpress's pipeline does.

What kvpress touches is stood in for, nothing of it is copied:
  * the model: a Qwen3 forward of the checkpoint's float32 weights (as make_qwen3_reference.py
    writes the equations) with a DynamicCache-shaped cache (layers[l].keys/values), each layer's
    self_attn an nn.Module (so kvpress's forward hooks run) registered as transformers' Qwen3Attention;
    masked_key_indices, once set, are masked out of every later attention (kvpress's attention patch);
  * PEFT, as transformers' load_adapter / set_adapter / enable_adapters / disable_adapters reach it:
    the adapter's keys with "base_model.model." stripped, each targeted nn.Linear computing
    W x + lora_B(lora_A(x)) * scaling, scaling lora_alpha / r (lora_alpha / sqrt(r) with use_rslora),
    as peft/tuners/lora/layer.py's Linear.forward (peft 5d602fdbf);
  * huggingface_hub.hf_hub_download: the local folder of the repository named; safetensors'
    load_file: a reader of the format; AutoTokenizer: sentencepiece of the checkpoint's
    tokenizer.model, no chat template (so kvpress's suffix is "\\n").
Recorded per case: the context and question ids, per layer the kept context positions of each KV head
and the keys/values the restore tokens left in the cache [kv_heads, N, head_dim], and the logits of the
question's last token.

  git -C <kvpress mirror> archive <commit> | tar -x -C /tmp/kvpress_ref
  /usr/bin/python3 scripts/policy_parity/kvpress_restorekv.py --reference /tmp/kvpress_ref \\
      --commit 8bb29b9c3078452a86d692f29123fa6c793e2b05 --out-dir tests/fixtures/policy_parity
"""
import functools
import importlib
import json
import math
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import common  # noqa: E402
from kvpress_critical import load_presses  # noqa: E402
from kvpress_duo_on_the_fly import read_safetensors, RotaryEmbedding  # noqa: E402
from make_qwen3_reference import rms_norm, rotate_half, write_safetensors  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CHECKPOINT = os.path.join(ROOT, "tests", "fixtures", "qwen3_reference")
HUB = {}  # repository -> its local folder, for the stand-in hf_hub_download
PROJECTIONS = {"q_proj": "self_attn", "k_proj": "self_attn", "v_proj": "self_attn", "o_proj": "self_attn",
               "gate_proj": "mlp", "up_proj": "mlp", "down_proj": "mlp"}


class LoraLinear:
    """nn.Linear without bias, plus PEFT's LoRA branch while the model's adapters are enabled."""

    def __init__(self, weight, model):
        self.weight, self.model, self.lora = weight, model, {}

    def __call__(self, x):
        result = x @ self.weight.T
        name = self.model.active_adapter
        if self.model.adapters_enabled and name in self.lora:
            a, b, scaling = self.lora[name]
            result = result + (x @ a.T) @ b.T * scaling
        return result


class Qwen3Attention(torch.nn.Module):
    """transformers' Qwen3Attention as kvpress's hooks see it (q_proj, q_norm, head_dim, layer_idx,
    config, o_proj), with an attention that honours kvpress's masked_key_indices."""

    def __init__(self, c, w, l, model):
        super().__init__()
        p = f"model.layers.{l}.self_attn."
        self.layer_idx, self.head_dim, self.eps = l, c["head_dim"], c["rms_norm_eps"]
        self.config = types.SimpleNamespace(num_attention_heads=c["num_attention_heads"], num_key_value_heads=c["num_key_value_heads"],
                                            hidden_size=c["hidden_size"], _attn_implementation="sdpa")
        self.num_key_value_groups = c["num_attention_heads"] // c["num_key_value_heads"]
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            setattr(self, proj, LoraLinear(w[p + proj + ".weight"], model))
        qn, kn = w[p + "q_norm.weight"], w[p + "k_norm.weight"]
        self.q_norm = lambda x: rms_norm(x, qn, self.eps)
        self.k_norm = lambda x: rms_norm(x, kn, self.eps)
        self.masked_key_indices = None
        self.hooks = []

    # torch 1.13's register_forward_hook has no with_kwargs (torch >= 2 does): kvpress's hooks are
    # called here as torch 2 calls them, hook(module, args, kwargs, output), a result replacing output.
    def register_forward_hook(self, hook, with_kwargs):
        assert with_kwargs
        self.hooks.append(hook)
        return types.SimpleNamespace(remove=lambda: self.hooks.remove(hook))

    def __call__(self, **kwargs):
        output = self.forward(**kwargs)
        for hook in list(self.hooks):
            result = hook(self, (), kwargs, output)
            output = output if result is None else result
        return output

    def forward(self, hidden_states, position_embeddings, past_key_values, **kwargs):
        _, T, _ = hidden_states.shape
        H, KV, hd = self.config.num_attention_heads, self.config.num_key_value_heads, self.head_dim
        q = self.q_norm(self.q_proj(hidden_states).view(1, T, H, hd)).transpose(1, 2)
        k = self.k_norm(self.k_proj(hidden_states).view(1, T, KV, hd)).transpose(1, 2)
        v = self.v_proj(hidden_states).view(1, T, KV, hd).transpose(1, 2)
        cos, sin = position_embeddings
        q = q * cos[:, None] + rotate_half(q) * sin[:, None]
        k = k * cos[:, None] + rotate_half(k) * sin[:, None]
        layer = past_key_values.layers[self.layer_idx]
        layer.keys = k if layer.keys is None else torch.cat([layer.keys, k], 2)
        layer.values = v if layer.values is None else torch.cat([layer.values, v], 2)
        n = layer.keys.shape[2]
        # Causal over cache slots (slot = position: kvpress masks, it never moves a key).
        allowed = torch.arange(n)[None, :] <= (n - T + torch.arange(T))[:, None]
        out = torch.empty(T, H, hd)
        for head in range(H):
            kv = head // self.num_key_value_groups
            mask = allowed.clone()
            if self.masked_key_indices is not None:
                _, heads, seqs = self.masked_key_indices
                mask[:, seqs[heads == kv]] = False
            logits = q[0, head] @ layer.keys[0, kv].T / math.sqrt(hd)
            out[:, head] = torch.softmax(logits.masked_fill(~mask, float("-inf")), -1) @ layer.values[0, kv]
        return self.o_proj(out.reshape(1, T, H * hd)), None


class Cache:
    def __init__(self, layers):
        self.layers = [types.SimpleNamespace(keys=None, values=None) for _ in range(layers)]

    def get_seq_length(self, layer_idx=0):
        keys = self.layers[layer_idx].keys
        return 0 if keys is None else keys.shape[2]

    def __len__(self):
        return len(self.layers)


class Decoder:
    """Qwen3Model: model.model(...) calls self.forward, which kvpress wraps during the prefill."""

    def __init__(self, c, w, model):
        self.c, self.w = c, w
        self.rotary_emb = RotaryEmbedding(c["head_dim"], c["rope_theta"])
        self.layers = []
        for l in range(c["num_hidden_layers"]):
            p = f"model.layers.{l}."
            mlp = types.SimpleNamespace(**{proj: LoraLinear(w[p + "mlp." + proj + ".weight"], model) for proj in ("gate_proj", "up_proj", "down_proj")})
            self.layers.append(types.SimpleNamespace(self_attn=Qwen3Attention(c, w, l, model), mlp=mlp,
                                                     input_layernorm=w[p + "input_layernorm.weight"],
                                                     post_attention_layernorm=w[p + "post_attention_layernorm.weight"]))
        self.forward = self._forward

    def __call__(self, **kwargs):
        return self.forward(**kwargs)

    def _forward(self, input_ids=None, past_key_values=None, inputs_embeds=None, position_ids=None, cache_position=None, use_cache=True):
        eps = self.c["rms_norm_eps"]
        x = self.w["model.embed_tokens.weight"][input_ids[0]] if inputs_embeds is None else inputs_embeds[0]
        T = x.shape[0]
        if position_ids is None:
            start = past_key_values.get_seq_length()
            position_ids = torch.arange(start, start + T)[None]
        cos, sin = self.rotary_emb(x, position_ids)
        for layer in self.layers:
            h = rms_norm(x, layer.input_layernorm, eps)
            attn, _ = layer.self_attn(hidden_states=h[None], position_embeddings=(cos, sin), past_key_values=past_key_values)
            x = x + attn[0]
            h = rms_norm(x, layer.post_attention_layernorm, eps)
            x = x + layer.mlp.down_proj(torch.nn.functional.silu(layer.mlp.gate_proj(h)) * layer.mlp.up_proj(h))
        return types.SimpleNamespace(last_hidden_state=rms_norm(x, self.w["model.norm.weight"], eps)[None])


class StandInQwen3ForCausalLM:
    def __init__(self, directory, adapters):
        with open(os.path.join(directory, "config.json")) as f:
            c = json.load(f)
        self.w = read_safetensors(os.path.join(directory, "model.safetensors"))
        self.adapters, self.peft_config = adapters, {}
        self.active_adapter, self.adapters_enabled = None, False
        self.dtype, self.device = torch.float32, torch.device("cpu")
        self.config = types.SimpleNamespace(name_or_path=directory, num_hidden_layers=c["num_hidden_layers"],
                                            num_key_value_heads=c["num_key_value_heads"], num_attention_heads=c["num_attention_heads"],
                                            hidden_size=c["hidden_size"])
        self.model = Decoder(c, self.w, self)

    def __call__(self, input_ids, past_key_values, num_logits_to_keep=0, position_ids=None):
        out = self.model(input_ids=input_ids, past_key_values=past_key_values, position_ids=position_ids)
        return out.last_hidden_state @ self.w["model.embed_tokens.weight"].T  # tied lm_head

    # transformers' PeftAdapterMixin, as RestoreKVPress calls it
    def load_adapter(self, repo, adapter_name):
        folder = self.adapters[repo]
        with open(os.path.join(folder, "adapter_config.json")) as f:
            config = json.load(f)
        r, alpha = config["r"], config["lora_alpha"]
        scaling = alpha / math.sqrt(r) if config["use_rslora"] else alpha / r
        tensors = read_safetensors(os.path.join(folder, "adapter_model.safetensors"))
        for key, t in tensors.items():
            key = key[len("base_model.model."):] if key.startswith("base_model.model.") else key
            _, _, l, block, proj, lora, _ = key.split(".")  # model.layers.<l>.<block>.<proj>.lora_A.weight
            linear = getattr(getattr(self.model.layers[int(l)], block), proj)
            a, b, _ = linear.lora.get(adapter_name, (None, None, scaling))
            linear.lora[adapter_name] = (t, b, scaling) if lora == "lora_A" else (a, t, scaling)
        self.peft_config[adapter_name] = config

    def set_adapter(self, name):
        self.active_adapter = name

    def enable_adapters(self):
        self.adapters_enabled = True

    def disable_adapters(self):
        self.adapters_enabled = False


class Tokenizer:
    chat_template = None

    def __init__(self, directory):
        import sentencepiece
        self.sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(directory, "tokenizer.model"))

    def encode(self, text, return_tensors=None, add_special_tokens=False):
        assert not add_special_tokens
        return torch.tensor([self.sp.encode(text)], dtype=torch.long)


def write_artefacts(folder, c, gen, n_restore, r, alpha, rslora, targets):
    """A restore-embeddings file and a PEFT LoRA adapter as the hub's higokri/RestoreKV-* hold them."""
    os.makedirs(folder, exist_ok=True)
    d, hd, H, KV, I = c["hidden_size"], c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"]
    shapes = {"q_proj": (H * hd, d), "k_proj": (KV * hd, d), "v_proj": (KV * hd, d), "o_proj": (d, H * hd),
              "gate_proj": (I, d), "up_proj": (I, d), "down_proj": (d, I)}
    round3 = lambda t: (t * 1000).round() / 1000  # noqa: E731  exact in the JSON-free float32 files too
    write_safetensors(os.path.join(folder, "restore_embeddings.safetensors"),
                      {"restore_embeddings": round3(torch.randn(n_restore, d, generator=gen) * 2.0)})
    tensors = {}
    for l in range(c["num_hidden_layers"]):
        for proj in targets:
            out_features, in_features = shapes[proj]
            stem = f"base_model.model.model.layers.{l}.{PROJECTIONS[proj]}.{proj}"
            tensors[stem + ".lora_A.weight"] = round3(torch.randn(r, in_features, generator=gen) * 0.3)
            tensors[stem + ".lora_B.weight"] = round3(torch.randn(out_features, r, generator=gen) * 0.3)
    write_safetensors(os.path.join(folder, "adapter_model.safetensors"), tensors)
    config = {  # every field peft's LoraConfig.save_pretrained writes (peft 0.17)
        "alpha_pattern": {}, "auto_mapping": None, "base_model_name_or_path": "qwen3_reference", "bias": "none",
        "corda_config": None, "eva_config": None, "exclude_modules": None, "fan_in_fan_out": False, "inference_mode": True,
        "init_lora_weights": True, "layer_replication": None, "layers_pattern": None, "layers_to_transform": None,
        "loftq_config": {}, "lora_alpha": alpha, "lora_bias": False, "lora_dropout": 0.05, "megatron_config": None,
        "megatron_core": "megatron.core", "modules_to_save": None, "peft_type": "LORA", "qalora_group_size": 16, "r": r,
        "rank_pattern": {}, "revision": None, "target_modules": sorted(targets), "target_parameters": None,
        "task_type": "CAUSAL_LM", "trainable_token_indices": None, "use_dora": False, "use_qalora": False, "use_rslora": rslora}
    with open(os.path.join(folder, "adapter_config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")


def boundary_tied(values, k):
    s = torch.sort(values.reshape(-1)).values
    return 0 < k < s.numel() and s[k - 1].item() == s[k].item()


def run_case(P, key, plus, folder, ratio, chunk_size, context, question):
    module = P("kvzip_press")
    tokenizer = Tokenizer(CHECKPOINT)
    module.AutoTokenizer = types.SimpleNamespace(from_pretrained=lambda name: tokenizer)
    name = "qwen3_reference"
    repo = f"higokri/RestoreKV-{name}" + ("_plus" if plus else "")
    HUB[repo] = folder
    model = StandInQwen3ForCausalLM(CHECKPOINT, {repo: folder})
    press = P("restorekv_press").RestoreKVPress(compression_ratio=ratio, kvzip_plus_normalization=plus)
    press.prepare = functools.partial(module.KVzipPress.prepare, press, chunk_size=chunk_size)
    spy = {}
    real_compress_post = module.KVzipPress.compress_post

    def compress_post(self, m):  # KVzip's masking, with the ratio RestoreKV raised; score_val is dropped after
        spy["scores"], spy["ratio"] = self.score_val.clone(), self.compression_ratio
        real_compress_post(self, m)
    module.KVzipPress.compress_post = compress_post
    ids = tokenizer.encode(context)
    cache = Cache(len(model.model.layers))
    try:
        with press(model):
            model.model(input_ids=ids, past_key_values=cache)
    finally:
        module.KVzipPress.compress_post = real_compress_post
    n, N = ids.shape[1], press.num_restore_tokens
    context_length = cache.get_seq_length()  # the pipeline's: the context and the restore tokens
    assert context_length == n + N
    q_ids = tokenizer.encode(question)
    logits = model(input_ids=q_ids, past_key_values=cache, position_ids=torch.arange(context_length, context_length + q_ids.shape[1])[None])
    scores = spy["scores"][:, 0]  # [L, kv, n]
    L, kv = scores.shape[0], scores.shape[1]
    total = int(scores.numel() * spy["ratio"])
    tied = boundary_tied(scores, total)
    counts = torch.bincount(torch.topk(-scores.reshape(-1), total).indices // (kv * n), minlength=L).tolist()
    per_layer = []
    for l, layer in enumerate(model.model.layers):
        tied |= boundary_tied(scores[l], counts[l])
        _, hs, ps = layer.self_attn.masked_key_indices
        c = cache.layers[l]
        per_layer.append({"kept": [sorted(set(range(n)) - set(ps[hs == h].tolist())) for h in range(kv)],
                          "restore_keys": c.keys[0, :, n:n + N].reshape(-1).tolist(),
                          "restore_values": c.values[0, :, n:n + N].reshape(-1).tolist()})
    case = {"policy": "kvpress:" + key, "artefacts": os.path.relpath(folder, os.path.join(ROOT, "tests", "fixtures")),
            "compression_ratio": ratio, "raised_ratio": spy["ratio"], "chunk_size": chunk_size, "restore_tokens": N,
            "context_ids": ids[0].tolist(), "question_ids": q_ids[0].tolist(), "per_layer": per_layer,
            "question_logits": logits[0, -1].tolist()}
    return case, tied


CONTEXT = ("Once upon a time there was a little girl named Lily. She liked to play in the park with her dog. "
           "One day she saw a big red ball under a tree and ran after it. Her friend Tom said they should go home.")
QUESTION = "\nWhat did Lily see?"
# (registry key, KVzip+, artefact folder, N restore tokens, LoRA r, alpha, rslora, targeted projections, ratio, chunk)
CASES = [
    ("RestoreKV", False, "restorekv", 8, 4, 8, False, list(PROJECTIONS), 0.5, 24),
    ("RestoreKV", False, "restorekv", 8, 4, 8, False, list(PROJECTIONS), 0.25, 2048),
    ("RestoreKV_plus", True, "restorekv_plus", 5, 2, 3, True, ["q_proj", "v_proj", "down_proj"], 0.6, 32),
]


def main():
    a = common.recorder_args()
    import logging
    logging.disable(logging.WARNING)
    P = load_presses(a.reference)
    importlib.import_module("transformers.models.qwen3.modeling_qwen3").Qwen3Attention = Qwen3Attention
    hub = types.ModuleType("huggingface_hub")
    hub.hf_hub_download = lambda repo_id, filename: os.path.join(HUB[repo_id], filename)
    sys.modules["huggingface_hub"] = hub
    safetensors = types.ModuleType("safetensors")
    safetensors.__path__ = []
    safetensors_torch = types.ModuleType("safetensors.torch")
    safetensors_torch.load_file = read_safetensors
    sys.modules["safetensors"], sys.modules["safetensors.torch"] = safetensors, safetensors_torch
    with open(os.path.join(CHECKPOINT, "config.json")) as f:
        c = json.load(f)
    written, cases = set(), []
    for i, (key, plus, folder, N, r, alpha, rslora, targets, ratio, chunk) in enumerate(CASES):
        folder = os.path.join(a.out_dir, "restorekv", folder)
        if folder not in written:
            write_artefacts(folder, c, torch.Generator().manual_seed(100 + i), N, r, alpha, rslora, targets)
            written.add(folder)
        case, tied = run_case(P, key, plus, folder, ratio, chunk, CONTEXT, QUESTION)
        assert not tied, (key, ratio)
        cases.append(case)
    reference = {"repo": "NVIDIA/kvpress", "commit": a.commit, "registry_keys": ["RestoreKV", "RestoreKV_plus"],
                 "checkpoint": "tests/fixtures/qwen3_reference", "peft": "huggingface/peft 5d602fdbf (LoRA Linear.forward, scaling)"}
    common.write_cases(os.path.join(a.out_dir, "kvpress_restorekv.json"), reference, cases)


if __name__ == "__main__":
    main()
