#!/usr/bin/python3
"""Record kvpress's needle-in-a-haystack rows by running kvpress's own insert_needle_in_haystack.

The reference is NVIDIA/kvpress evaluation/benchmarks/needle_in_haystack/utils.py at the mirror's
HEAD, read from the git mirror and executed as written (transformers' PreTrainedTokenizer import
stubbed). Its tokenizer argument is stories260K's sentencepiece model wrapped as the HF Llama
tokenizer the function calls: encode(text, add_special_tokens=False) = sp.encode(text),
decode(ids, skip_special_tokens=True) = sp.decode(ids without BOS/EOS).

The dataset row (Hugging Face alessiodevoto/paul_graham_essays, not reachable here) is stood in
for by tests/fixtures/needle_kvpress/row.jsonl, written by this script: the first 6,000 characters
of the Paul Graham essays RULER bundles (data/ruler/PaulGrahamEssays.json) as context, and the
needle, question, answer prefix and max_new_tokens the dataset is known to carry (the classic
San Francisco needle; see docs/tasks-c.md).

    /usr/bin/python3 scripts/needle_reference/record_kvpress.py

Writes tests/fixtures/needle_kvpress/{row.jsonl, inserted.json}.
"""
import json
import os
import subprocess
import sys
import types

import pandas as pd
import sentencepiece as spm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIRROR = "/work/.mirror/NVIDIA+kvpress/repo"
PATH = "evaluation/benchmarks/needle_in_haystack/utils.py"
OUT = os.path.join(ROOT, "tests/fixtures/needle_kvpress")


class SpAsHf:
    def __init__(self, model_file):
        self.sp = spm.SentencePieceProcessor(model_file=model_file)

    def encode(self, text, add_special_tokens=True):
        ids = self.sp.encode(text)
        return ([self.sp.bos_id()] if add_special_tokens else []) + ids

    def decode(self, ids, skip_special_tokens=False):
        if skip_special_tokens:
            ids = [i for i in ids if i not in (self.sp.bos_id(), self.sp.eos_id())]
        return self.sp.decode(ids)


def main():
    commit = subprocess.run(["git", "--git-dir", MIRROR, "rev-parse", "HEAD"], check=True, capture_output=True).stdout.decode().strip()
    src = subprocess.run(["git", "--git-dir", MIRROR, "show", "HEAD:" + PATH], check=True, capture_output=True).stdout.decode()
    transformers = types.ModuleType("transformers")
    transformers.PreTrainedTokenizer = object
    sys.modules["transformers"] = transformers
    ns = {"__name__": "needle_utils"}
    exec(compile(src, PATH, "exec"), ns)

    essays = json.load(open(os.path.join(ROOT, "data/ruler/PaulGrahamEssays.json"), encoding="utf-8"))["text"]
    row = {"context": essays[:6000],
           "needle": "The best thing to do in San Francisco is eat a sandwich and sit in Dolores Park on a sunny day.",
           "question": "What is the best thing to do in San Francisco?",
           "answer_prefix": "The best thing to do in San Francisco is",
           "max_new_tokens": 40}
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "row.jsonl"), "w", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
    tok = SpAsHf(os.path.join(ROOT, "..", "shared", "models", "stories260K", "tok512.model"))
    cases = []
    for max_context_length in (300, 512, 1024):
        for depth in (0, 11, 50, 89, 100):
            df = ns["insert_needle_in_haystack"](pd.DataFrame([row]), tok, max_context_length, depth)
            r = df.iloc[0]
            cases.append({"max_context_length": max_context_length, "needle_depth": depth, "context": r["context"],
                          "question": r["question"], "answer_prefix": r["answer_prefix"], "max_new_tokens": int(r["max_new_tokens"])})
    out = {"source": {"repo": "NVIDIA/kvpress", "commit": commit, "file": PATH, "recorded_by": "scripts/needle_reference/record_kvpress.py",
                      "tokenizer": "shared/models/stories260K/tok512.model (sentencepiece " + spm.__version__ + ") as an HF tokenizer",
                      "row": "tests/fixtures/needle_kvpress/row.jsonl (a stand-in for alessiodevoto/paul_graham_essays)"},
           "cases": cases}
    with open(os.path.join(OUT, "inserted.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", len(cases), "cases")


if __name__ == "__main__":
    main()
