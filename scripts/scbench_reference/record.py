#!/usr/bin/env python3
"""Record SCBench's prompts and scores for kvbench's tests (tests/fixtures/scbench/recorded.json), by
running the official code of microsoft/MInference's scbench/ on the fixture files
(tests/fixtures/scbench/*.jsonl, SCBench's released record format):

  * eval_utils.create_multiturn_prompt (gold history and --disable_golden_context) and
    create_scdq_prompt, without a chat template and with Llama-3's (../shared/models/llama3-tokenizer
    tokenizer_config.json), rendered as transformers' apply_chat_template renders (jinja2's
    ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, raise_exception,
    strftime_now; the config's special tokens);
  * compute_scores.get_score_one on (prediction, label) cases, labels as get_ground_truth hands them.

eval_utils.py imports jieba, rouge, transformers (GenerationConfig, SinkCache) and torch at module
level (torch is not installed here), compute_scores.py evaluate, args and repo_qa_utils: stand-ins replace them (no prompt or
scorer used here reads them; ROUGE_SCORER is never called: no summary scores are recorded).

Usage: /usr/bin/python3 scripts/scbench_reference/record.py --scbench CHECKOUT/scbench --commit SHA
  (CHECKOUT: `git archive <commit> scbench | tar -x -C CHECKOUT` of microsoft/MInference)
"""
import argparse
import datetime
import json
import os
import sys
import types

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "scbench")
LLAMA3 = os.path.join(ROOT, "..", "shared", "models", "llama3-tokenizer", "tokenizer_config.json")
TASKS = ["scbench_kv", "scbench_prefix_suffix", "scbench_vt", "scbench_qa_eng", "scbench_qa_chn", "scbench_choice_eng",
         "scbench_many_shot", "scbench_mf", "scbench_summary", "scbench_summary_with_needles", "scbench_repoqa",
         "scbench_repoqa_and_kv"]


def stub(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


class Llama3Tok:
    """apply_chat_template(messages, add_generation_prompt, tokenize=False) as transformers renders."""

    def __init__(self, path):
        config = json.load(open(path, encoding="utf-8"))
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])

        def raise_exception(message):
            raise jinja2.exceptions.TemplateError(message)

        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(fmt)
        self.template = env.from_string(config["chat_template"])
        self.special = {k: config[k] for k in ("bos_token", "eos_token") if isinstance(config.get(k), str)}

    def apply_chat_template(self, messages, add_generation_prompt=False, tokenize=False):
        return self.template.render(messages=messages, add_generation_prompt=add_generation_prompt, tools=None,
                                    documents=None, **self.special)


SCORE_CASES = [
    ("kv_retrieval", "The value is c3d4.", "c3d4"), ("kv_retrieval", "C3D4", "c3d4"), ("kv_retrieval", "", "x"),
    ("scbench_vt", "X1, y1 and Q", ["X1", "Y1", "Z1"]), ("scbench_vt", "none", ["A2", "B2"]),
    ("scbench_vt", "a2 b2", ["A2", "B2"]),
    ("passkey", "The pass key is 71432.", "71432"), ("passkey", "key 071432", "71432"), ("passkey", "no digits", "71432"),
    ("passkey", "71432", ["71432"]),
    ("math_find", "40 is the largest", 40), ("math_find", "It is 40.7", 40), ("math_find", "-2", 2), ("math_find", "none", 2),
    ("math_find", "2.5", 2.5),
    ("longdialogue_qa_eng", "  the answer is Alice ", ["alice"]), ("longdialogue_qa_eng", "Bob", ["alice"]),
    ("longdialogue_qa_eng", "(b) yes", "B"), ("longdialogue_qa_eng", "xyz", "Bq"),
    ("longbook_choice_eng", "B. red", ["red", "B"]), ("longbook_choice_eng", "The answer is: red", ["red", "B"]),
    ("longbook_choice_eng", "I think C", ["red", "B"]), ("longbook_choice_eng", "", ["red", "B"]),
    ("longbook_choice_eng", "red", ["red", "B"]),
    ("longbook_qa_chn", "小明去了公园。", "公园"), ("longbook_qa_chn", "没有", "公园"), ("longbook_qa_chn", "公", ["公园"]),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scbench", required=True, help="the checkout's scbench/ folder")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--out", default=os.path.join(FIXTURES, "recorded.json"))
    args = ap.parse_args()
    stub("jieba")
    torch = stub("torch")
    torch.profiler = stub("torch.profiler")
    stub("rouge", Rouge=object)
    stub("tqdm", tqdm=lambda x, *a, **k: x)
    stub("transformers", GenerationConfig=object, SinkCache=object)
    stub("evaluate", load=lambda name: None)
    stub("args", parse_args=lambda: None)
    # repo_qa_utils imports rich, tempdir and tree_sitter_languages (not installed here): stand-ins
    # whose parser fails, so sanitize_output takes its no-tree-sitter branch (the first block), as
    # kvbench does; nltk is Debian's python3-nltk 3.8.
    for name in ("tempdir", "rich", "rich.console", "rich.progress", "rich.table"):
        stub(name, Console=object, BarColumn=object, MofNCompleteColumn=object, Progress=object, TextColumn=object,
             TimeElapsedColumn=object, Table=object)
    sys.modules["transformers"].AutoConfig = object

    class NoParser:
        def parse(self, data):
            raise RuntimeError("no tree-sitter here")

    class NoLanguage:
        def query(self, q):
            return None

    stub("tree_sitter_languages", get_parser=lambda lang: NoParser(), get_language=lambda lang: NoLanguage())
    sys.path.insert(0, args.scbench)
    import repo_qa_utils  # noqa: E402
    import compute_scores  # noqa: E402
    import eval_utils  # noqa: E402

    tok = Llama3Tok(LLAMA3)
    prompts = {}
    for task in TASKS:
        rows = [json.loads(line) for line in open(os.path.join(FIXTURES, task + ".jsonl"), encoding="utf-8")]
        per = []
        for eg in rows:
            entry = {}
            for chat in (False, True):
                key = "chat" if chat else "plain"
                entry[key] = {
                    "gold": eval_utils.create_multiturn_prompt(eg, task, tok, chat)["prompts"],
                    "model": eval_utils.create_multiturn_prompt(eg, task, tok, chat, disable_golden_context=True)["prompts"],
                    "multi_request": eval_utils.create_scdq_prompt(eg, task, tok, chat)["prompts"],
                }
            entry["ground_truth"] = eval_utils.get_ground_truth(eg, task)
            per.append(entry)
        prompts[task] = per
    scores = [{"scorer": s, "prediction": p, "label": l, "score": float(compute_scores.get_score_one(p, l, s, "model"))}
              for s, p, l in SCORE_CASES]
    needles = [{"name": "add", "needle": "def add(a, b):\n    return a + b"},
               {"name": "scale", "needle": "def scale(values, factor):\n    return [v * factor for v in values]"},
               {"name": "first", "needle": "def first(xs):\n    return xs[0]"}]
    outputs = ["```python\ndef add(a, b):\n    return a + b\n```",
               "Here it is:\n```\n\n  def scale(values, factor):\n    return [v * factor for v in values]\n```\nDone.",
               "def add(a, b): return a - b",
               "```py3.9\ndef first(xs):\n    return xs[0]\n```",
               "no code at all", "", "```python\ndef add(a, b):\n    return a + b",
               "```\ndef first(xs):\n```\n```python\ndef add(a, b):\n    return a + b\n```"]
    repoqa = []
    for text in outputs:
        for gold in ("add", "first"):
            verdict, best, similarity = repo_qa_utils.needle_evaluator(text, {"func_name": gold}, needles, "python", False)
            repoqa.append({"output": text, "gold": gold, "sanitized": repo_qa_utils.sanitize_output(text, "python"),
                           "best": best, "similarity": similarity, "best_match": verdict == repo_qa_utils.Result.BEST_MATCH})
    out = {"reference": {"repo": "microsoft/MInference", "commit": args.commit,
                         "code": ["scbench/eval_utils.py create_multiturn_prompt, create_scdq_prompt, get_ground_truth",
                                  "scbench/compute_scores.py get_score_one",
                                  "scbench/repo_qa_utils.py sanitize_output, needle_evaluator (without tree-sitter)"],
                         "chat_template": "../shared/models/llama3-tokenizer/tokenizer_config.json"},
           "prompts": prompts, "scores": scores, "repoqa": {"needles": needles, "cases": repoqa}}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{sum(len(v) for v in prompts.values())} records, {len(scores)} score cases -> {args.out}")


if __name__ == "__main__":
    main()
