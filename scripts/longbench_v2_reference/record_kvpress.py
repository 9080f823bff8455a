#!/usr/bin/python3
"""Record kvpress's LongBench-v2 rows and scores by running kvpress's own code.

The reference is NVIDIA/kvpress (evaluation/benchmarks/longbenchv2/create_huggingface_dataset.py and
calculate_metrics.py at the mirror's HEAD). Nothing is copied: the two files are read from the git
mirror and executed as written, with `datasets` stubbed so that load_dataset() serves the
LongBench-v2 fixture (tests/fixtures/longbench_v2/data_fixture.json, real items) as a pandas frame
and push_to_hub() captures the rows it would upload. calculate_metrics() then scores, for every
row, the 49 responses of reference_cases.json (pred.py's extraction cases) against every letter.

    /usr/bin/python3 scripts/longbench_v2_reference/record_kvpress.py

Writes data/longbench_v2/kvpress.json (the two templates, max_new_tokens, answer_prefix: what
kvbench reads) and tests/fixtures/longbench_v2/kvpress_reference.json: {"source", "rows": [{_id, context,
question, answer_prefix, max_new_tokens}], "scores": [{response, answer, score}], "metrics": the
calculate_metrics() dict of one frame (the rows' answers, the first 10 responses)}.
"""
import json
import os
import subprocess
import sys
import types

import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIRROR = "/work/.mirror/NVIDIA+kvpress/repo"
BASE = "evaluation/benchmarks/longbenchv2/"


def show(path):
    return subprocess.run(["git", "--git-dir", MIRROR, "show", "HEAD:" + path], check=True, capture_output=True).stdout.decode()


def main():
    commit = subprocess.run(["git", "--git-dir", MIRROR, "rev-parse", "HEAD"], check=True, capture_output=True).stdout.decode().strip()
    items = json.load(open(os.path.join(ROOT, "tests/fixtures/longbench_v2/data_fixture.json"), encoding="utf-8"))
    pushed = {}

    class FakeLoaded:
        def to_pandas(self):
            return pd.DataFrame(items)

    class FakeDataset:
        def __init__(self, df):
            self.df = df

        @classmethod
        def from_pandas(cls, df):
            return cls(df)

        def push_to_hub(self, *args, **kwargs):
            pushed["df"] = self.df.copy()

    datasets = types.ModuleType("datasets")
    datasets.Dataset = FakeDataset
    datasets.load_dataset = lambda *a, **k: FakeLoaded()
    sys.modules["datasets"] = datasets
    module = {"__name__": "__main__"}
    exec(compile(show(BASE + "create_huggingface_dataset.py"), BASE + "create_huggingface_dataset.py", "exec"), module)
    df = pushed["df"]
    rows = [{"_id": r["_id"], "context": r["context"], "question": r["question"], "answer_prefix": r["answer_prefix"],
             "max_new_tokens": int(r["max_new_tokens"])} for _, r in df.iterrows()]

    metrics_ns = {}
    exec(compile(show(BASE + "calculate_metrics.py"), BASE + "calculate_metrics.py", "exec"), metrics_ns)
    responses = [c["response"] for c in json.load(open(os.path.join(ROOT, "tests/fixtures/longbench_v2/reference_cases.json")))["extract"]]
    scores = [{"response": resp, "answer": letter, "score": bool(metrics_ns["score"](resp, letter))} for resp in responses for letter in "ABCD"]
    frame = df.copy()
    frame["predicted_answer"] = responses[: len(frame)]
    metrics = {str(k): float(v) for k, v in metrics_ns["calculate_metrics"](frame).items()}
    out = {"source": {"repo": "NVIDIA/kvpress", "commit": commit, "files": [BASE + "create_huggingface_dataset.py", BASE + "calculate_metrics.py"],
                      "recorded_by": "scripts/longbench_v2_reference/record_kvpress.py", "python": sys.version.split()[0], "pandas": pd.__version__},
           "rows": rows, "scores": scores,
           "metrics": {"predicted_answers": responses[: len(frame)], "calculate_metrics": metrics}}
    path = os.path.join(ROOT, "tests/fixtures/longbench_v2/kvpress_reference.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", path, len(rows), "rows", len(scores), "scores")
    # The templates kvbench reads (data/longbench_v2/kvpress.json), as the module defines them.
    templates = {"source": out["source"]["repo"] + " @ " + commit + " " + BASE + "create_huggingface_dataset.py",
                 "written_by": "scripts/longbench_v2_reference/record_kvpress.py",
                 "context_template": module["context_template"], "question_template": module["question_template"],
                 "max_new_tokens": int(df["max_new_tokens"].iloc[0]), "answer_prefix": df["answer_prefix"].iloc[0]}
    with open(os.path.join(ROOT, "data/longbench_v2/kvpress.json"), "w", encoding="utf-8") as f:
        json.dump(templates, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
