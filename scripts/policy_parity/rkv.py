#!/usr/bin/python3
"""R-KV parity fixture (Zefan-Cai/R-KV, "R-KV: Redundancy-aware KV Cache Compression for Reasoning
Models"): runs the official R1KV.update_kv (rkv/compression/r1_kv.py, with rkv/utils.py's
compute_attention_scores and cal_similarity) through the official patched attention
LlamaAttention_forward and the official step-level trigger CausalLM_forward (rkv/modeling.py), on
seeded random queries/keys, over a prompt and then one decode token per forward, as
run_math.py's model.generate drives them; records after every forward which positions each KV
head keeps. Nothing of R-KV is copied here: every file is loaded from the checkout.

  git -C <R-KV mirror> archive <commit> rkv run_math.py | tar -x -C /tmp/rkv_ref
  /usr/bin/python3 scripts/policy_parity/rkv.py --reference /tmp/rkv_ref \
      --commit d15c9767e67c2bd9807128fecc35223fa2484a69 --out tests/fixtures/policy_parity/rkv.json

What runs and what is stood in for:
  * rkv/compression/__init__.py of the pinned commit imports modules that are not in the commit
    (`.rkv`, `.simkv`), so the package cannot be imported as is: "rkv.compression" is registered
    here as an empty package holding what that __init__ binds first (`from ..utils import
    cal_similarity, compute_attention_scores`, from the checkout's rkv/utils.py) plus the classes
    loaded from the checkout's own files (r1_kv.py, snapkv.py, streamingllm.py, h2o.py,
    analysiskv.py); rkv/modeling.py is then loaded from the checkout as "rkv.modeling".
  * transformers is stubbed (common.install_stubs): apply_rotary_pos_emb is the identity (the
    fixture's q and k ARE the post-RoPE states the policy sees), eager_attention_forward returns
    zeros (the model's attention output plays no part in the selection), q/k/v/o_proj are replaced
    by modules returning the step's tensors, the DynamicCache stand-in gets __len__.
  * The config object is shared by all layers and the CausalLM (as in transformers), built the way
    run_math.py builds compression_config / model_config; lm_head returns logits whose argmax is
    the case's scripted "next token" (only the newline / </think> cases read it).

Fixture layout: common.py's, per case "policy": "rkv", with "params" (R1KV's and the trigger's
settings), and per step "trigger" (the compression flag the forward ran with: null at prefill,
then the CausalLM's flag) and "compress" (update_kv selected tokens: the cache had >= budget
entries when it was called). Per layer: "q" [H*T*d] and "k" [kvh*T*d] (post-RoPE, T = step's
tokens, head-major), "kept" (sorted positions per KV head), "ties" (positions tied within 1e-5 at
the top-k boundary per KV head), and on compressing steps "slots": the positions per KV head in
the cache's slot order after the step (R1KV gathers the kept tokens in top-k score order, then the
window; the slot order feeds later max pooling and cal_similarity's "last"/"first" index, so it is
part of the state). Values are positions (common.position_values), so kept/slots are read off the
value cache. Seeds are chosen so that no compression has a boundary tie, two selected scores
within 1e-5 (relative) of each other (ambiguous slot order), or a key cosine within 1e-5 of
cal_similarity's 0.5 threshold.
"""
import os
import sys
import types
import typing
import logging as std_logging

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

EPS = 1e-5


# --------------------------------------------------------------------------- reference loading
def _eager_stub(module, query, key, value, attention_mask, **kwargs):
    b, h, t, d = query.shape
    return torch.zeros(b, t, h * d), None


def load_reference(ref):
    common.install_stubs()
    import transformers.models.llama.modeling_llama as ml  # the stub module
    ml.apply_rotary_pos_emb = lambda q, k, cos, sin, *a, **kw: (q, k)
    ml.eager_attention_forward = _eager_stub
    import transformers.utils as tu
    tu.logging = types.SimpleNamespace(get_logger=std_logging.getLogger)
    import transformers.processing_utils as pu
    pu.Unpack = typing.Unpack
    import transformers.cache_utils as cu

    pkg = types.ModuleType("rkv")
    pkg.__path__ = [os.path.join(ref, "rkv")]
    sys.modules["rkv"] = pkg
    utils = common.load_module(os.path.join(ref, "rkv", "utils.py"), "rkv.utils")
    comp = types.ModuleType("rkv.compression")
    comp.__path__ = [os.path.join(ref, "rkv", "compression")]
    comp.cal_similarity = utils.cal_similarity
    comp.compute_attention_scores = utils.compute_attention_scores
    sys.modules["rkv.compression"] = comp
    r1 = common.load_module(os.path.join(ref, "rkv", "compression", "r1_kv.py"), "rkv.compression.r1_kv")
    comp.R1KV = r1.R1KV
    for fname, cls in (("snapkv", "SnapKV"), ("streamingllm", "StreamingLLM"), ("h2o", "H2O"),
                       ("analysiskv", "AnalysisKV")):
        m = common.load_module(os.path.join(ref, "rkv", "compression", fname + ".py"), "rkv.compression." + fname)
        setattr(comp, cls, getattr(m, cls))
    modeling = common.load_module(os.path.join(ref, "rkv", "modeling.py"), "rkv.modeling")

    class Cache(cu.DynamicCache):
        def __len__(self):
            return len(self.key_cache)

    return types.SimpleNamespace(r1=r1, modeling=modeling, Cache=Cache)


# --------------------------------------------------------------------------- the fake model
class Feed(nn.Module):
    """A projection that returns the tensor the step set."""
    def __init__(self):
        super().__init__()
        self.out = None

    def forward(self, x):
        return self.out


class Attn(nn.Module):
    pass


class Config:
    """PretrainedConfig's attribute bag and update()."""
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def update(self, d):
        self.__dict__.update(d)


class LmHead:
    def __init__(self, vocab):
        self.vocab, self.next_token = vocab, 1

    def __call__(self, h):
        logits = torch.zeros(h.shape[0], h.shape[1], self.vocab)
        logits[:, -1, self.next_token] = 1.0
        return logits


class Inner:
    """The decoder stack: every layer's official patched attention over the shared cache."""
    def __init__(self, R, attns, hidden):
        self.R, self.attns, self.hidden = R, attns, hidden
        self.layers = [types.SimpleNamespace(self_attn=a) for a in attns]
        self.feed = None

    def __call__(self, input_ids=None, past_key_values=None, **kw):
        T = input_ids.shape[1]
        h = torch.zeros(1, T, self.hidden)
        for layer, a in enumerate(self.attns):
            q, k, v = self.feed[layer]
            a.q_proj.out = q.transpose(1, 2).reshape(1, T, -1)
            a.k_proj.out = k.transpose(1, 2).reshape(1, T, -1)
            a.v_proj.out = v.transpose(1, 2).reshape(1, T, -1)
            a.o_proj.out = torch.zeros(1, T, self.hidden)
            self.R.modeling.LlamaAttention_forward(a, hidden_states=h, position_embeddings=(None, None),
                                                   attention_mask=None, past_key_value=past_key_values,
                                                   cache_position=None)
        return (h,)


def build_model(R, heads, kv_heads, d, layers, method_config, model_config):
    hidden = heads * d
    config = Config(hidden_size=hidden, num_attention_heads=heads, num_key_value_heads=kv_heads, head_dim=d,
                    attention_dropout=0.0, attention_bias=False, _attn_implementation="eager",
                    output_attentions=False, output_hidden_states=False, use_return_dict=False)
    # run_math.py's compression_config
    compression_config = {"method": "rkv", "method_config": method_config, "compression": None, "update_kv": True}
    attns = []
    for layer in range(layers):
        a = Attn()
        R.modeling.LlamaAttention_init(a, config, layer, compression_config)
        a.q_proj, a.k_proj, a.v_proj, a.o_proj = Feed(), Feed(), Feed(), Feed()
        a.training = False
        attns.append(a)
    model = types.SimpleNamespace(config=config, model=Inner(R, attns, hidden), lm_head=LmHead(16))
    model.config.update(model_config)  # run_math.py: model.config.update(model_config)
    model.newline_token_ids = [NEWLINE]
    model.after_think_token_ids = [THINK_END]
    return model


NEWLINE, THINK_END, OTHER = 2, 3, 1


# --------------------------------------------------------------------------- inputs
def rand_keys(gen, kv_heads, T, d, protos, redundant):
    """Keys: a share `redundant` of the tokens sit near one of the head's prototype directions
    (cosine mostly above cal_similarity's 0.5 threshold), the others are random."""
    k = torch.randn(1, kv_heads, T, d, generator=gen) * 2.0
    near = torch.rand(1, kv_heads, T, generator=gen) < redundant
    which = torch.randint(0, protos.shape[1], (1, kv_heads, T), generator=gen)
    proto = torch.gather(protos.unsqueeze(0).expand(1, -1, -1, -1), 2,
                         which.unsqueeze(-1).expand(-1, -1, -1, d))
    k = torch.where(near.unsqueeze(-1), proto + 0.35 * k, k)
    return (k * 1000).round() / 1000


def rand_q(gen, heads, T, d):
    q = torch.randn(1, heads, T, d, generator=gen) * 2.0
    return (q * 1000).round() / 1000


# --------------------------------------------------------------------------- one case
class Bad(Exception):
    pass


def run_case(R, spec, seed):
    name, heads, kv_heads, d, layers, prompt, n_decode = (spec[x] for x in (
        "name", "heads", "kv_heads", "head_dim", "layers", "prompt", "decode"))
    mc = {"budget": spec["budget"], "window_size": spec.get("window", 8), "mix_lambda": spec.get("mix_lambda", 0.07),
          "retain_ratio": 0.2, "retain_direction": spec.get("retain_direction", "last"), "first_tokens": 4}
    if "kernel" in spec:
        mc["kernel_size"] = spec["kernel"]
    mcfg = {"divide_method": spec.get("divide_method", "step_length"), "divide_length": spec.get("divide_length", 128),
            "compression_content": spec.get("content", "all")}
    model = build_model(R, heads, kv_heads, d, layers, mc, mcfg)
    cluster = model.model.attns[0].kv_cluster
    gen = torch.Generator().manual_seed(seed)
    protos = [torch.randn(kv_heads, 4, d, generator=gen) * 2.0 for _ in range(layers)]
    # The scripted greedy tokens: tokens[i] is what forward i predicts (= the token at position prompt+i).
    tokens = [OTHER] * (n_decode + 1)
    if mcfg["divide_method"] == "newline":
        tokens = [NEWLINE if torch.rand(1, generator=gen).item() < spec["newline_rate"] else OTHER for _ in tokens]
    if "think_end" in spec:
        tokens[spec["think_end"] - prompt] = THINK_END
    cache = R.Cache()
    real_topk, real_sim = torch.Tensor.topk, R.r1.cal_similarity
    steps, pos = [], 0
    for i in range(n_decode + 1):
        T = prompt if i == 0 else 1
        feed, qs, ks = [], [], []
        for layer in range(layers):
            q = rand_q(gen, heads, T, d)
            k = rand_keys(gen, kv_heads, T, d, protos[layer], spec.get("redundant", 0.5))
            feed.append((q, k, common.position_values(kv_heads, pos, T, d)))
            qs.append(q)
            ks.append(k)
        model.model.feed = feed
        model.lm_head.next_token = tokens[i]
        trigger = model.config.compression
        before = [None] * layers
        if i > 0:
            before = [cache.value_cache[l][0, :, :, 0].tolist() for l in range(layers)]
        calls, sims = [], []

        def topk_spy(self, k_, *a, **kw):
            calls.append((self.detach().clone(), k_))
            return real_topk(self, k_, *a, **kw)

        def sim_spy(key_states, *a, **kw):
            sims.append(key_states.detach().clone())
            return real_sim(key_states, *a, **kw)

        torch.Tensor.topk = topk_spy
        R.r1.cal_similarity = sim_spy
        try:
            R.modeling.CausalLM_forward(model, input_ids=torch.zeros(1, T, dtype=torch.long), past_key_values=cache,
                                        use_cache=True, return_dict=False)
        finally:
            torch.Tensor.topk = real_topk
            R.r1.cal_similarity = real_sim
        compress = len(calls) > 0
        if compress and len(calls) != layers:
            raise RuntimeError("expected one top-k per layer")
        out_layers = []
        for layer in range(layers):
            vals = cache.value_cache[layer][0, :, :, 0]
            entry = {"q": common.flat(qs[layer]), "k": common.flat(ks[layer]),
                     "kept": common.kept_positions(cache.value_cache[layer]), "ties": [[] for _ in range(kv_heads)]}
            if compress:
                scores, kk = calls[layer]
                # slot -> position of the cache update_kv scored (the old cache plus this step's tokens)
                slot_pos = [b + list(range(pos, pos + T)) for b in before[layer]] if i > 0 else \
                    [list(range(pos, pos + T))] * kv_heads
                ties = common.boundary_ties(scores[0], kk, eps=EPS)
                entry["ties"] = [sorted(slot_pos[h][s] for s in t) for h, t in enumerate(ties)]
                if any(entry["ties"]):
                    raise Bad("boundary tie")
                top = torch.sort(scores[0], dim=-1, descending=True).values[:, :kk]
                gap = (top[:, :-1] - top[:, 1:]) / top[:, :-1].abs().clamp_min(1e-30)
                if kk > 1 and gap.min().item() <= EPS:
                    raise Bad("selected scores near-tied (slot order)")
                ksn = sims[layer][0]
                kn = ksn / (ksn.norm(dim=-1, keepdim=True) + 1e-8)
                cos = kn @ kn.transpose(-1, -2)
                if ((cos - 0.5).abs() <= EPS).any():
                    raise Bad("cosine at the threshold")
                entry["slots"] = [[int(round(x)) for x in vals[h].tolist()] for h in range(kv_heads)]
            out_layers.append(entry)
        steps.append({"tokens": T, "phase": "prefill" if i == 0 else "decode", "trigger": trigger,
                      "compress": compress, "layers": out_layers})
        pos += T
    params = {"budget": cluster.budget, "window_size": cluster.window_size, "kernel_size": cluster.kernel_size,
              "mix_lambda": cluster.mix_lambda, "retain_ratio": cluster.retain_ratio,
              "retain_direction": cluster.retain_direction, "similarity_threshold": 0.5,
              "gqa_pooling": "max", "divide_method": mcfg["divide_method"], "divide_length": mcfg["divide_length"],
              "compression_content": mcfg["compression_content"]}
    if mcfg["divide_method"] == "newline":
        params["newline_positions"] = [prompt + j for j, t in enumerate(tokens) if t == NEWLINE]
    if "think_end" in spec:
        params["think_end_position"] = spec["think_end"]
    return {"name": name, "policy": "rkv", "seed": seed, "heads": heads, "kv_heads": kv_heads, "head_dim": d,
            "layers": layers, "budget": cluster.budget, "prompt_len": prompt, "params": params, "steps": steps}


def first_clean(R, spec, seed0):
    last = None
    for seed in range(seed0, seed0 + 200):
        try:
            return run_case(R, spec, seed)
        except Bad as e:
            last = e
    raise RuntimeError(f"{spec['name']}: no clean seed ({last})")


CASES = [
    # MHA, the prompt (40 >= 32) compressed at prefill, then every 16 decoded positions.
    dict(name="mha4_b32_L16", heads=4, kv_heads=4, head_dim=16, layers=1, prompt=40, decode=110, budget=32,
         divide_length=16),
    # GQA 8/2, prompt below the budget, compressed once the cache reaches 48 at a multiple of 16.
    dict(name="gqa82_b48_L16", heads=8, kv_heads=2, head_dim=16, layers=1, prompt=40, decode=110, budget=48,
         divide_length=16),
    # Two layers (a query cache each), lambda 0.1 (README's value), divide length 20.
    dict(name="gqa82_b32_L20_2layers_l01", heads=8, kv_heads=2, head_dim=16, layers=2, prompt=40, decode=80,
         budget=32, divide_length=20, mix_lambda=0.1),
    # The paper scripts' divide length 128: one compression, at position 128.
    dict(name="gqa42_b48_L128", heads=4, kv_heads=2, head_dim=16, layers=1, prompt=40, decode=100, budget=48,
         divide_length=128),
    # retain_direction "first", kernel 5, mostly redundant keys.
    dict(name="mha4_b32_L16_first_k5", heads=4, kv_heads=4, head_dim=16, layers=1, prompt=40, decode=80, budget=32,
         divide_length=16, retain_direction="first", kernel=5, redundant=0.8),
    # divide_method "newline": compress at the forward that feeds a newline token.
    dict(name="gqa82_b32_newline", heads=8, kv_heads=2, head_dim=16, layers=1, prompt=40, decode=90, budget=32,
         divide_method="newline", newline_rate=0.12),
    # compression_content "think": no compression from the </think> token (position 100) on.
    dict(name="gqa42_b32_L16_think", heads=4, kv_heads=2, head_dim=16, layers=1, prompt=40, decode=90, budget=32,
         divide_length=16, content="think", think_end=100),
    # Budget 33 = 1 + 2*16: the cache holds exactly `budget` entries at the trigger (position 32):
    # update_kv keeps all and only reorders them by score; prompt 48 = 3*16 triggers at once.
    dict(name="gqa42_b33_L16_reorder", heads=4, kv_heads=2, head_dim=16, layers=1, prompt=20, decode=60, budget=33,
         divide_length=16),
    dict(name="mha2_b32_L16_prompt48", heads=2, kv_heads=2, head_dim=16, layers=1, prompt=48, decode=40, budget=32,
         divide_length=16),
]


def main():
    a = common.recorder_args(out="--out", out_help="fixture file written")
    R = load_reference(a.reference)
    cases = [first_clean(R, spec, 9100 + 100 * i) for i, spec in enumerate(CASES)]
    reference = {"repo": "Zefan-Cai/R-KV", "commit": a.commit,
                 "code": ["rkv/compression/r1_kv.py R1KV.update_kv",
                          "rkv/utils.py compute_attention_scores, cal_similarity",
                          "rkv/modeling.py LlamaAttention_init, LlamaAttention_forward, CausalLM_forward",
                          "run_math.py compression_config / model_config"],
                 "stubs": "transformers (identity RoPE, zero attention output), rkv/compression/__init__.py bypassed "
                          "(imports missing .rkv/.simkv at this commit)"}
    common.write_cases(a.out, reference, cases)
    for c in cases:
        n = sum(s["compress"] for s in c["steps"])
        print(f"  {c['name']}: seed {c['seed']}, {len(c['steps'])} steps, {n} compressions")


if __name__ == "__main__":
    main()
