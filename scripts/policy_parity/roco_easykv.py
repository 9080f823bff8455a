#!/usr/bin/env python3
"""Records what the official EasyKV RoCo keeps, for tests/policies/roco_easykv_parity_test.cpp.

Usage: python3 scripts/policy_parity/roco_easykv.py REFERENCE_CHECKOUT [OUT_DIR]
  REFERENCE_CHECKOUT: a checkout of github.com/DRSY/EasyKV (tested at a1d71ca).
  OUT_DIR: default tests/fixtures/policy_parity.
Needs Debian's python3-torch and python3-numpy only.

Runs EasyKV's own generate() in its 'encoding_decoding' mode (prompt streamed in blocks of
`stride` under a fixed budget, then decoding with one eviction per token) with kv_policy 'roco'
and its defaults (temp_length 4 sinks, recent_ratio 0.1 while encoding, 0.3 while decoding,
keep_attention False). The model is the fixture: a stand-in whose forward returns the stream's
attention (over what each KV head still holds plus the new tokens) for the query heads, and
whose cache values carry each token's position in their first component. The stand-in records
the cache it is handed at every call, i.e. what EasyKV kept after the previous step.
Budgets: EasyKV holds idx tokens, the largest value <= budget + stride with (length - idx) %
stride == 0; the fixture's prompt length makes idx = budget + stride, kvbench's budget.
"""
import os
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_stubs  # noqa: E402
from streamed_attention import attention, count_changed_steps, git_commit, make_stream, write_fixture  # noqa: E402

STRIDE = 5
EASYKV_BUDGET = 55            # generation_config budget; EasyKV adds the stride: holds 60
HELD = EASYKV_BUDGET + STRIDE
PROMPT = 25 * STRIDE           # (PROMPT - HELD) % STRIDE == 0: EasyKV holds exactly HELD
DECODE = 40                   # decoding steps whose result is observed


class StreamModel:
    """What EasyKV calls as `self`: config, device, tokenizer, and a forward."""

    def __init__(self, keys, queries, heads, kv_heads, perturb=None):
        self.keys, self.queries, self.heads, self.kv_heads = keys, queries, heads, kv_heads
        self.config = types.SimpleNamespace(num_hidden_layers=1, num_attention_heads=heads,
                                            num_key_value_heads=kv_heads, architectures=["LlamaForCausalLM"])
        self.device = torch.device("cpu")
        self.tokenizer = types.SimpleNamespace(eos_token_id=-1, decode=lambda ids, **k: "",
                                               convert_ids_to_tokens=lambda ids: ["x" for _ in ids])
        self.next_position, self.steps, self.kept = 0, [], []
        self.perturb, self.gen = perturb, torch.Generator().manual_seed(5)

    def __call__(self, input_ids, past_key_values=None, attention_mask=None, position_ids=None, use_cache=True,
                 output_attentions=False):
        T = input_ids.shape[-1]
        new = list(range(self.next_position, self.next_position + T))
        self.next_position += T
        d = self.keys.size(-1)
        if past_key_values is None:
            held = [[] for _ in range(self.kv_heads)]
        else:
            values = past_key_values[0][1]
            held = [[int(p) for p in values[0, h, :, 0].tolist()] for h in range(self.kv_heads)]
            self.kept.append(held)
        self.steps.append(T)
        group = self.heads // self.kv_heads
        attn = []
        for h in range(self.kv_heads):
            q = self.queries[new][:, h * group:(h + 1) * group]
            if self.perturb is not None:
                q = q * (1 + self.perturb * torch.randn(q.shape, generator=self.gen))
            attn.append(attention(q, self.keys[:, h], held[h], new))  # [g, T, n]
        k_new = self.keys[new].permute(1, 0, 2).unsqueeze(0)
        v_new = torch.zeros(1, self.kv_heads, T, d)
        v_new[0, :, :, 0] = torch.tensor(new, dtype=torch.float32)
        if past_key_values is None:
            past = [[k_new, v_new]]
        else:
            past = [[torch.cat([past_key_values[0][0], k_new], 2), torch.cat([past_key_values[0][1], v_new], 2)]]
        logits = torch.zeros(1, T, 8)
        attentions = (torch.cat(attn, 0).unsqueeze(0),) if output_attentions else None
        return types.SimpleNamespace(past_key_values=past, logits=logits, attentions=attentions)


def run_reference(generate, keys, queries, heads, kv_heads, perturb=None):
    model = StreamModel(keys, queries, heads, kv_heads, perturb)
    config = {"budget": EASYKV_BUDGET, "kv_policy": "roco", "max_new_tokens": DECODE + 1, "temperature": 1.0,
              "top_p": 1.0}
    generate(model, torch.zeros(1, PROMPT, dtype=torch.long), config, kv_mode="encoding_decoding", stride=STRIDE)
    # kept[i] is what the cache held when call i + 1 began, i.e. after step i.
    return model.steps[:len(model.kept)], model.kept


def main():
    ref = os.path.abspath(sys.argv[1])
    out = sys.argv[2] if len(sys.argv) > 2 else "tests/fixtures/policy_parity"
    reference_stubs.install_transformers_stub()
    sys.path.insert(0, ref)
    import easykv.easykv as easykv_module
    # generate() moves the prefill attention to 'cuda' when keep_attention is set; never here.
    torch.cuda.is_available = lambda: False
    for name, heads, kv_heads, seed in (("roco_easykv_mha", 4, 4, 41), ("roco_easykv_gqa", 8, 4, 42)):
        keys, queries = make_stream(seed, PROMPT + DECODE + 2, heads, kv_heads, head_dim=8)
        torch.manual_seed(0)  # generate() samples tokens; they play no part here
        steps, kept = run_reference(easykv_module.generate, keys, queries, heads, kv_heads)
        torch.manual_seed(0)
        _, nudged = run_reference(easykv_module.generate, keys, queries, heads, kv_heads, perturb=1e-5)
        ties = count_changed_steps(kept, nudged)
        write_fixture(
            os.path.join(out, name + ".json"),
            reference={"script": __file__, "repo": "DRSY/EasyKV", "commit": git_commit(ref),
                       "class": "easykv/easykv.py:generate (kv_mode encoding_decoding, kv_policy roco)"},
            policy="roco", params={"scope": "easykv"}, budget=HELD, heads=heads, kv_heads=kv_heads, head_dim=8,
            keys=keys, queries=queries, steps=steps, kept=kept, near_ties=ties,
            notes=f"EasyKV budget {EASYKV_BUDGET} + stride {STRIDE}; steps: prefix, prompt blocks of the stride, "
                  "then decoding (steps of 1 after the prompt)")
        sizes = [len(s[0]) for s in kept]
        print(f"{name}: {len(steps)} steps {steps[:3]}..., sizes {sizes[:3]}...{sizes[-3:]}, near ties {ties}")


if __name__ == "__main__":
    main()
