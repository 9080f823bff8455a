#!/usr/bin/env python3
"""Record Hugging Face transformers' sampling logits processors on fixed logits, as a JSON fixture
for kvbench's C++ sampler (tests/fixtures/reasoning/sampling_cases.json).

Runs transformers' own code: src/transformers/generation/logits_process.py, loaded standalone
(without the rest of transformers) under CPU torch. Only these classes of it are used:
LogitsProcessorList, RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper, TopKLogitsWarper,
TopPLogitsWarper, MinPLogitsWarper.

Usage:
    /usr/bin/python3 scripts/reasoning_reference/record_sampling.py \
        --transformers PATH [--rev REV] [--commit SHA] [--out tests/fixtures/reasoning/sampling_cases.json]

PATH may be
  * a transformers checkout (PATH/src/transformers/generation/logits_process.py is loaded; the commit
    is `git -C PATH rev-parse HEAD` when PATH is a work tree),
  * a bare git directory such as a mirror (the file is taken with `git show REV:src/...`, REV
    defaulting to HEAD; the commit is `git rev-parse REV`),
  * the logits_process.py file itself (then give --commit, or the file's header must name it as
    "at commit <40 hex>").

Stubs. logits_process.py imports, relative to its package, only small helpers of transformers:
    from ..pytorch_utils import isin_mps_friendly    -> torch.isin (used by EOS processors only)
    from ..utils import add_start_docstrings          -> decorator prepending the docstrings
    from ..utils.logging import get_logger           -> logging.getLogger
    from .._typing import ...   (newer versions)      -> `object` placeholders
    `if TYPE_CHECKING: from ..generation.configuration_utils import GenerationConfig` never runs.
The stubs are modules registered in sys.modules as transformers, transformers.utils,
transformers.utils.logging, transformers.pytorch_utils, transformers._typing and
transformers.generation; any other name imported from them resolves to a permissive placeholder
(an identity decorator factory) and is listed in the fixture under "stubbed_names".

The processor chain of each case is built like GenerationMixin._get_logits_processor with
do_sample=True and nothing else set (see ORDER below): repetition penalty, then temperature,
top-k, top-p, min-p, each only under its condition; min_tokens_to_keep is 1 for num_beams == 1.
Greedy (do_sample=False) keeps only the repetition penalty from that list and takes
torch.argmax (first index of the maximum).

Floats: logits are float32 (generate casts next-token logits to float32); every float in the
fixture is the exact float32 value written as a JSON number (a double that converts back to the
same float32); -inf / inf / nan are the strings "-inf" / "inf" / "nan".

tie_order_dependent: a sorting step (top-k, top-p, min-p) is tie-order dependent when the tokens
it filters split a group of equal input scores (some members kept, some filtered): which members
survive then depends on the order torch's sort/argsort leaves equal values in (torch.sort is not
documented as stable with stable=False). A case is tie-order dependent when any step is. For those
cases the recorded output is what torch (version in the fixture) on CPU did; "tie_groups_split"
lists the groups and which members were kept.

knife_edge: a top-p or min-p step whose decision quantity lies within float rounding of its
threshold ("boundary_margin" in each such step: top-p absolute distance of a cumulative
probability from float32(1 - top_p), min-p relative distance of a probability from
float32(min_p) * p_max). Such cases need bit-exact softmax/cumsum to reproduce; others do not.

Arithmetic notes (torch 1.13, CPU, checked while writing this): Python-float settings are cast to
float32 before the op (scores / temperature == float32 division by float32(temperature); the
penalty likewise; `cumulative_probs <= 1 - top_p` compares against float32(1 - top_p), and
min_p * p_max is a float32 product); CPU cumsum of float32 accumulates in double and rounds each
prefix to float32.
"""
import argparse
import json
import logging
import math
import os
import re
import subprocess
import sys
import tempfile
import types

import numpy as np
import torch

from common import load_module

REL = "src/transformers/generation/logits_process.py"

# Order and addition conditions of GenerationMixin._get_logits_processor (do_sample=True), as read
# from src/transformers/generation/utils.py. Only the entries relevant here (a plain decoder with
# nothing but these five settings) are listed; the processors that precede them
# (sequence_bias, encoder_repetition_penalty, ...) and follow them (typical_p, epsilon/eta,
# watermarking, LogitNormalization) are not added with GenerationConfig defaults.
ORDER = [
    {"processor": "RepetitionPenaltyLogitsProcessor", "setting": "repetition_penalty",
     "condition": "repetition_penalty is not None and repetition_penalty != 1.0",
     "args": "penalty=repetition_penalty", "do_sample_only": False},
    {"processor": "TemperatureLogitsWarper", "setting": "temperature",
     "condition": "temperature is not None and temperature != 1.0",
     "args": "temperature", "do_sample_only": True},
    {"processor": "TopKLogitsWarper", "setting": "top_k",
     "condition": "top_k is not None and top_k != 0",
     "args": "top_k=top_k, min_tokens_to_keep=min_tokens_to_keep", "do_sample_only": True},
    {"processor": "TopPLogitsWarper", "setting": "top_p",
     "condition": "top_p is not None and top_p < 1.0",
     "args": "top_p=top_p, min_tokens_to_keep=min_tokens_to_keep", "do_sample_only": True},
    {"processor": "MinPLogitsWarper", "setting": "min_p",
     "condition": "min_p is not None",
     "args": "min_p=min_p, min_tokens_to_keep=min_tokens_to_keep", "do_sample_only": True},
]

SORTING = {"TopKLogitsWarper", "TopPLogitsWarper", "MinPLogitsWarper"}

STUBBED = []


# ----------------------------------------------------------------------------------------- stubs
class _Permissive:
    """Placeholder for a name the stubs do not define: usable as a decorator (factory)."""

    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda fn: fn

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        return _Permissive(self._name + "." + item)


class _StubModule(types.ModuleType):
    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        STUBBED.append(self.__name__ + "." + item)
        value = _Permissive(self.__name__ + "." + item)
        setattr(self, item, value)
        return value


def _add_start_docstrings(*docstr):
    def docstring_decorator(fn):
        fn.__doc__ = "".join(docstr) + (fn.__doc__ if fn.__doc__ is not None else "")
        return fn

    return docstring_decorator


def install_stubs():
    def mod(name, is_pkg=False):
        m = _StubModule(name)
        if is_pkg:
            m.__path__ = []
        sys.modules[name] = m
        return m

    tf = mod("transformers", True)
    utils = mod("transformers.utils", True)
    ulog = mod("transformers.utils.logging")
    ulog.get_logger = lambda name=None: logging.getLogger(name)
    utils.logging = ulog
    utils.add_start_docstrings = _add_start_docstrings
    putils = mod("transformers.pytorch_utils")
    putils.isin_mps_friendly = lambda elements, test_elements: torch.isin(elements, test_elements)
    typing_ = mod("transformers._typing")
    typing_.WhisperGenerationConfigLike = object
    gen = mod("transformers.generation", True)
    tf.utils, tf.pytorch_utils, tf._typing, tf.generation = utils, putils, typing_, gen


def locate(path, rev, commit):
    """Returns (file path, commit or None)."""
    if os.path.isfile(path):
        if commit is None:
            with open(path, encoding="utf-8") as f:
                m = re.search(r"at commit ([0-9a-f]{40})", f.read(4000))
            commit = m.group(1) if m else None
        return path, commit
    wt = os.path.join(path, REL)
    if os.path.isfile(wt):
        if commit is None:
            try:
                commit = subprocess.check_output(["git", "-C", path, "rev-parse", "HEAD"], text=True).strip()
            except (OSError, subprocess.CalledProcessError):
                commit = None
        return wt, commit
    # bare git directory (e.g. a mirror)
    rev = rev or "HEAD"
    sha = subprocess.check_output(["git", "--git-dir", path, "rev-parse", rev + "^{commit}"], text=True).strip()
    text = subprocess.check_output(["git", "--git-dir", path, "show", f"{sha}:{REL}"])
    tmp = tempfile.NamedTemporaryFile("wb", suffix="_logits_process.py", delete=False)
    tmp.write(text)
    tmp.close()
    return tmp.name, commit or sha


def load_logits_process(file):
    install_stubs()
    return load_module("transformers.generation.logits_process", file)


# ----------------------------------------------------------------------------------------- values
def f32(values):
    return torch.tensor(np.asarray(values, dtype=np.float32)).reshape(1, -1)


def enc(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def enc_list(t):
    return [enc(v) for v in t.reshape(-1).tolist()]


def ids_tensor(ids):
    return torch.tensor([list(ids)], dtype=torch.long)


# ------------------------------------------------------------------------------------- the chain
def build_chain(lp, s, do_sample=True):
    """GenerationMixin._get_logits_processor for these settings (num_beams taken from s)."""
    chain = []
    mtk = s.get("min_tokens_to_keep", 1)
    rp, t, k, p, mp = (s.get(n) for n in ("repetition_penalty", "temperature", "top_k", "top_p", "min_p"))
    if rp is not None and rp != 1.0:
        chain.append(("RepetitionPenaltyLogitsProcessor", {"penalty": rp}, lp.RepetitionPenaltyLogitsProcessor(penalty=rp)))
    if do_sample:
        if t is not None and t != 1.0:
            chain.append(("TemperatureLogitsWarper", {"temperature": t}, lp.TemperatureLogitsWarper(t)))
        if k is not None and k != 0:
            chain.append(("TopKLogitsWarper", {"top_k": k, "min_tokens_to_keep": mtk},
                          lp.TopKLogitsWarper(top_k=k, min_tokens_to_keep=mtk)))
        if p is not None and p < 1.0:
            chain.append(("TopPLogitsWarper", {"top_p": p, "min_tokens_to_keep": mtk},
                          lp.TopPLogitsWarper(top_p=p, min_tokens_to_keep=mtk)))
        if mp is not None:
            chain.append(("MinPLogitsWarper", {"min_p": mp, "min_tokens_to_keep": mtk},
                          lp.MinPLogitsWarper(min_p=mp, min_tokens_to_keep=mtk)))
    return chain


def single(lp, name, params):
    cls = getattr(lp, name)
    return [(name, dict(params), cls(**params))]


def tie_split(name, inp, out, filter_value=-math.inf):
    """Groups of equal input scores that a sorting step split (some filtered, some not)."""
    if name not in SORTING:
        return []
    x = inp.reshape(-1).tolist()
    y = out.reshape(-1).tolist()
    groups = {}
    for i, v in enumerate(x):
        if v == filter_value:  # already filtered: stays filtered whatever the order
            continue
        groups.setdefault(v, []).append(i)
    split = []
    for v, members in groups.items():
        if len(members) < 2:
            continue
        kept = [i for i in members if y[i] != filter_value]
        if 0 < len(kept) < len(members):
            split.append({"value": enc(v), "members": members, "kept": kept})
    return split


def boundary_margin(name, params, inp):
    """Distance of the step's decision quantity from its threshold, recomputed the same way (diagnostic):
    top-p: min |cumsum(softmax(sorted asc)) - float32(1 - top_p)| over the positions not forced kept;
    min-p: min |p - float32(min_p) * p_max| / (float32(min_p) * p_max) over tokens with p > 0."""
    if name == "TopPLogitsWarper":
        srt, _ = torch.sort(inp, descending=False)
        cum = srt.softmax(dim=-1).cumsum(dim=-1).reshape(-1)
        thr = torch.tensor(1 - params["top_p"], dtype=torch.float32)
        mtk = params.get("min_tokens_to_keep", 1)
        d = (cum[: cum.numel() - mtk].double() - thr.double()).abs()
        m = float(d.min()) if d.numel() else math.inf
        return m, m < 1e-6
    if name == "MinPLogitsWarper":
        probs = torch.softmax(inp, dim=-1).reshape(-1)
        scaled = torch.tensor(params["min_p"], dtype=torch.float32) * probs.max()
        if float(scaled) == 0.0:
            return math.inf, False
        pos = probs[probs > 0].double()
        m = float(((pos - scaled.double()).abs() / scaled.double()).min())
        return m, m < 1e-5
    return None, False


def run_case(lp, case):
    logits = f32(case["logits"])
    input_ids = ids_tensor(case["input_ids"])
    if case["kind"] == "chain":
        chain = build_chain(lp, case["settings"])
    else:
        chain = single(lp, case["processor"], case["params"])
    plist = lp.LogitsProcessorList([c[2] for c in chain])

    steps = []
    scores = logits.clone()
    dependent_steps = []
    knife_steps = []
    for name, params, proc in chain:
        out = proc(input_ids, scores)
        assert out.dtype == torch.float32
        split = tie_split(name, scores, out)
        if split:
            dependent_steps.append(name)
        step = {"processor": name, "params": params, "scores": enc_list(out)}
        margin, knife = boundary_margin(name, params, scores)
        if margin is not None:
            step["boundary_margin"] = enc(margin)
            step["knife_edge"] = knife
            if knife:
                knife_steps.append(name)
        if split:
            step["tie_groups_split"] = split
        steps.append(step)
        scores = out
    final = plist(input_ids, logits.clone())
    assert enc_list(final) == enc_list(scores), case["name"]  # LogitsProcessorList == step by step
    probs = torch.nn.functional.softmax(final, dim=-1)
    kept = [i for i, v in enumerate(final.reshape(-1).tolist()) if v != -math.inf]

    rec = {
        "name": case["name"],
        "description": case["description"],
        "kind": case["kind"],
        "vocab_size": int(logits.shape[-1]),
        "logits": enc_list(logits),
        "input_ids": list(case["input_ids"]),
    }
    if case["kind"] == "chain":
        rec["settings"] = case["settings"]
    else:
        rec["processor"] = case["processor"]
        rec["params"] = case["params"]
    rec["chain"] = [{"processor": n, "params": p} for n, p, _ in chain]
    rec["steps"] = steps
    rec["output_scores"] = enc_list(final)
    rec["probs"] = enc_list(probs)
    rec["kept_ids"] = kept
    rec["tie_order_dependent"] = bool(dependent_steps)
    if dependent_steps:
        rec["tie_order_dependent_steps"] = dependent_steps
    rec["knife_edge"] = bool(knife_steps)
    if case["kind"] == "chain":
        g_chain = build_chain(lp, case["settings"], do_sample=False)
        g = lp.LogitsProcessorList([c[2] for c in g_chain])(input_ids, logits.clone())
        gmax = float(g.max())
        rec["greedy"] = {
            "chain": [{"processor": n, "params": p} for n, p, _ in g_chain],
            "scores": enc_list(g),
            "argmax": int(torch.argmax(g, dim=-1).item()),
            "max_tied_ids": [i for i, v in enumerate(g.reshape(-1).tolist()) if v == gmax],
        }
    return rec


from sampling_cases import cases  # noqa: E402


def dumps(obj, level=0):
    """JSON with one key per line, but lists of scalars kept on one line."""
    pad, pad1 = " " * level, " " * (level + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{pad1}{json.dumps(k)}: {dumps(v, level + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if all(not isinstance(v, (dict, list)) for v in obj):
            return json.dumps(obj)
        return "[\n" + ",\n".join(pad1 + dumps(v, level + 1) for v in obj) + "\n" + pad + "]"
    return json.dumps(obj)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transformers", required=True,
                    help="transformers checkout, bare git dir, or logits_process.py itself")
    ap.add_argument("--rev", default=None, help="revision when --transformers is a bare git dir (default HEAD)")
    ap.add_argument("--commit", default=None, help="commit to record (when it cannot be detected)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                  "tests", "fixtures", "reasoning", "sampling_cases.json"))
    args = ap.parse_args()

    torch.set_num_threads(1)
    file, commit = locate(args.transformers, args.rev, args.commit)
    lp = load_logits_process(file)
    with open(file, encoding="utf-8") as f:
        is_excerpt = "EXCERPT of huggingface/transformers" in f.read(400)

    records = [run_case(lp, c) for c in cases()]
    names = [r["name"] for r in records]
    assert len(set(names)) == len(names)
    fixture = {
        "transformers_commit": commit,
        "transformers_file": REL,
        "loaded_from_excerpt": is_excerpt,
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "python_version": sys.version.split()[0],
        "device": "cpu",
        "dtype": "float32",
        "stubbed_names": sorted(set(STUBBED)),
        "order": ORDER,
        "order_source": "GenerationMixin._get_logits_processor, src/transformers/generation/utils.py at "
                        "000034a44ef887621d9b36001a5eb7c46e64cb3f (v4.5x; the same order in the other "
                        "stored versions read)",
        "defaults_source": "GenerationConfig.__init__, src/transformers/generation/configuration_utils.py "
                           "at 008f5c8c29be84d4721dc6d1e0fcd72300580be4 (v4 line; newer v5 stores None and "
                           "fills defaults elsewhere)",
        "tie_order_note": "torch.sort/argsort (stable=False) on CPU: observed stable (index order among "
                          "equals) for the 12-token cases, not stable for 1000 tokens; torch.topk is only "
                          "used for the k-th value, so top-k is tie-order independent",
        "min_tokens_to_keep_rule": "num_beams > 1: len(eos ids) + 1 (2 for one eos or none); else 1",
        "generation_config_defaults": {"do_sample": False, "num_beams": 1, "temperature": 1.0, "top_k": 50,
                                       "top_p": 1.0, "min_p": None, "typical_p": 1.0, "epsilon_cutoff": 0.0,
                                       "eta_cutoff": 0.0, "repetition_penalty": 1.0},
        "token_selection": {
            "do_sample": "probs = softmax(scores, dim=-1) (float32); next = torch.multinomial(probs, 1)",
            "greedy": "next = torch.argmax(scores, dim=-1): first index of the maximum; only the processors "
                      "not gated on do_sample (here the repetition penalty) are applied",
        },
        "float_encoding": "exact float32 values as JSON numbers; -inf/inf/nan as strings",
        "cases": records,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(dumps(fixture) + "\n")
    dep = [r["name"] for r in records if r["tie_order_dependent"]]
    print(f"wrote {len(records)} cases to {args.out}; tie-order dependent: {dep}")


if __name__ == "__main__":
    main()
