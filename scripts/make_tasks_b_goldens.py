#!/usr/bin/env python3
"""Golden files for the tasks-b protocols, derived by EXECUTING the reference code (never kvbench's).

Reads the references from git mirrors outside this repository (the `fetch` snapshots):
  jeffwillette/cascading_kv_cache  cascade/main/jobs/mmlu.py at HEAD (76c89a4) and at a53e7af
                                   ("commit at submission"), cascade/dataset/pg19.py's selection
  stanford-crfm/helm               summarization_scenario.py (_clean_and_truncate, _xsum_filter,
                                   get_instances), in_context_learning_adapter.py (sample_examples,
                                   construct_example_prompt), prompt.py (Prompt.text),
                                   common_adapter_specs.py (get_summarization_adapter_spec values)
Their functions are extracted with `ast` and executed with stubbed imports (torch, transformers,
datasets are not needed by the functions used). Nothing of theirs is copied into the repository.

Usage: scripts/make_tasks_b_goldens.py [--mirrors /work/.mirror] [--shared ../shared]
Writes tests/tasks/golden_prompts_b/*.txt and *.json.
"""
import argparse
import ast
import csv
import json
import os
import random
import subprocess
import sys
import types
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import cycle
from typing import Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "tasks", "golden_prompts_b")


def git_show(repo, rev, path):
    return subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], check=True, capture_output=True, text=True).stdout


def extract(source, names, namespace, class_name=None):
    """Executes the named top-level functions/assignments (or methods of class_name) of `source`."""
    tree = ast.parse(source)
    body = tree.body
    if class_name:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name).body
    for node in body:
        name = getattr(node, "name", None)
        if name is None and isinstance(node, ast.Assign):
            name = getattr(node.targets[0], "id", None)
        if name in names:
            exec(compile(ast.Module(body=[node], type_ignores=[]), "<reference>", "exec"), namespace)
    missing = [n for n in names if n not in namespace]
    if missing:
        raise SystemExit(f"reference code lacks {missing}")
    return namespace


def write(name, text):
    with open(os.path.join(OUT, name), "w", encoding="utf-8", newline="") as f:
        f.write(text)
    print("wrote", name, len(text), "chars")


# ---------------------------------------------------------------- MMLU (Cascade)
def mmlu_rows(shared, split, subject):
    path = os.path.join(shared, "data", "mmlu", split, f"{subject}_{split}.csv")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    assert header[0] == "question", header
    # lukaemon/mmlu's record layout, which the Cascade code reads.
    return [{"input": r[0], "A": r[1], "B": r[2], "C": r[3], "D": r[4], "target": "ABCD"[int(r[5])]} for r in rows]


def mmlu_goldens(mirror, shared):
    repo = os.path.join(mirror, "jeffwillette+cascading_kv_cache", "repo")
    subject = "abstract_algebra"
    dataset = {"train": mmlu_rows(shared, "dev", subject), "validation": [], "test": mmlu_rows(shared, "test", subject)}
    for rev, tag in (("HEAD", "current"), ("a53e7af", "submission")):
        src = git_show(repo, rev, "cascade/main/jobs/mmlu.py")
        ns = extract(src, ["MMLU_FORMAT", "MMLU_FORMAT_TARGET_QUESTION", "format_mmlu", "get_fewshots", "format_mmlu_plain"], {})
        few = ns["get_fewshots"](dataset, subject, shift=1)  # train (= dev, 5 rows) + validation, first 20
        args = (dataset["test"][0], subject, few) + ((None,) if tag == "current" else ())
        text, truth = ns["format_mmlu_plain"](*args)
        write(f"mmlu_{subject}_test0_cascade_{tag}_5shot.txt", text)
        if tag == "submission":
            stem = extract(src, ["MMLU_STEM"], {})["MMLU_STEM"]
            write("mmlu_cascade_stem_subjects.json", json.dumps(stem, indent=1) + "\n")


def pg19_selection_golden(mirror):
    """The subset rule of cascade/dataset/pg19.py on a list of lengths with ties."""
    repo = os.path.join(mirror, "jeffwillette+cascading_kv_cache", "repo")
    src = git_show(repo, "a53e7af", "cascade/dataset/pg19.py")
    assert "sub = self.inputs[20:20 + 24] + self.inputs[19:20]" in src
    assert "self.inputs = sorted(self.inputs, key=lambda x: x.size(1))" in src
    lengths = [(i * 37) % 23 + 100 for i in range(50)]  # 50 books, many equal lengths (stability matters)
    # The two statements above, on (index, length) pairs: sorted() is stable, as in the reference.
    inputs = sorted(enumerate(lengths), key=lambda x: x[1])
    sub = inputs[20:20 + 24] + inputs[19:20]
    write("pg19_cascade_selection.json", json.dumps({"lengths": lengths, "selected": [i for i, _ in sub]}) + "\n")


# ---------------------------------------------------------------- HELM summarization
@dataclass
class Output:
    text: str


@dataclass
class Reference:
    output: Output
    tags: list


@dataclass
class Input:
    text: str


@dataclass
class Instance:
    input: Input
    references: list
    split: str = ""

    @property
    def first_correct_reference(self):
        return next((r for r in self.references if "correct" in r.tags), None)


def helm_goldens(mirror, shared):
    repo = os.path.join(mirror, "stanford-crfm+helm", "repo")
    scen = git_show(repo, "HEAD", "src/helm/benchmark/scenarios/summarization_scenario.py")
    icl = git_show(repo, "HEAD", "src/helm/benchmark/adaptation/adapters/in_context_learning_adapter.py")
    prompt_src = git_show(repo, "HEAD", "src/helm/benchmark/adaptation/prompt.py")
    specs = git_show(repo, "HEAD", "src/helm/benchmark/adaptation/common_adapter_specs.py")
    run_specs = git_show(repo, "HEAD", "src/helm/benchmark/run_specs/classic_run_specs.py")
    for needle in ('input_prefix="###\\nArticle: "', 'input_suffix="\\n\\n"', 'output_suffix="\\n"', 'stop_sequences=["###"]'):
        assert needle in specs, needle
    assert '"sampling_min_length": 50, "sampling_max_length": 150, "doc_max_length": 512' in run_specs
    ns = {"Optional": Optional, "List": List, "Dict": Dict, "defaultdict": defaultdict, "cycle": cycle, "random": random,
          "Instance": Instance, "Input": Input, "Reference": Reference, "Output": Output, "CORRECT_TAG": "correct",
          "TRAIN_SPLIT": "train", "VALID_SPLIT": "valid", "TEST_SPLIT": "test"}
    extract(scen, ["_clean_and_truncate", "_xsum_filter", "get_instances"], ns, "SummarizationScenario")
    extract(icl, ["sample_examples", "construct_example_prompt", "construct_output"], ns, "InContextLearningAdapter")
    prompt_ns = {"dataclass": dataclass, "List": List, "Optional": Optional, "re": __import__("re"), "Substitution": object}
    extract(prompt_src, ["Prompt"], prompt_ns)

    def scenario(name, train, evaluated, key_article, key_summary):
        s = types.SimpleNamespace(dataset_name=name, sampling_min_length=50, sampling_max_length=150, doc_max_length=512)
        s._clean_and_truncate = types.MethodType(ns["_clean_and_truncate"], s)
        s._xsum_filter = types.MethodType(ns["_xsum_filter"], s)
        s._load_dataset = lambda dataset_name, output_path: (
            {"train": train, "validation": [], "test": evaluated}, key_article, key_summary)
        return ns["get_instances"](s, "")

    def adapter(num_sents, k):
        out_pref = "Summarize the above article in 1 sentence.\n" if num_sents == 1 else f"Summarize the above article in {num_sents} sentences.\n"
        spec = types.SimpleNamespace(input_prefix="###\nArticle: ", input_suffix="\n\n", output_prefix=out_pref, output_suffix="\n",
                                     max_train_instances=k, multi_label=False, instance_prefix="\n", global_prefix="",
                                     global_suffix="", substitutions=[], instructions="")
        a = types.SimpleNamespace(adapter_spec=spec)
        for m in ("sample_examples", "construct_example_prompt", "construct_output"):
            setattr(a, m, types.MethodType(ns[m], a))
        return a

    def prompt(a, train_instances, eval_instance):
        P = prompt_ns["Prompt"]
        return P(global_prefix="", global_suffix="", instance_prefix="\n", substitutions=[], instructions_block="",
                 train_instance_blocks=[a.construct_example_prompt(t, True, None) for t in train_instances],
                 eval_instance_block=a.construct_example_prompt(eval_instance, False, None)).text

    fixtures = os.path.join(ROOT, "tests", "fixtures", "summarization")
    load = lambda f: [json.loads(l) for l in open(os.path.join(fixtures, f), encoding="utf-8") if l.strip()]
    # XSum, HF layout (document, summary): training split fixture and two evaluated documents.
    train, evaluated = load("xsum_train_hf.jsonl"), load("xsum_eval_hf.jsonl")
    instances = scenario("xsum", train, evaluated, "document", "summary")
    train_inst = [i for i in instances if i.split == "train"]
    eval_inst = [i for i in instances if i.split == "test"]
    a = adapter(1, 3)
    shots = a.sample_examples(train_inst, seed=0)
    pool_text = [i.input.text for i in train_inst]
    write("xsum_helm_train_pool.json", json.dumps({"pool_articles_first_words": [t.split()[:4] for t in pool_text],
                                                    "sampled_pool_indices": [pool_text.index(s.input.text) for s in shots]}, indent=1) + "\n")
    write("xsum_helm_3shot_eval0.txt", prompt(a, shots, eval_inst[0]))
    write("xsum_helm_0shot_eval1.txt", prompt(a, [], eval_inst[1]))
    # CNN/DM: the staged test article (567 words) cleaned and cut to 512 words, 0-shot.
    cnn = [json.loads(open(os.path.join(shared, "data", "cnn_dailymail", "cnn_dailymail_test_head.jsonl"), encoding="utf-8").readline())]
    cnn_inst = [i for i in scenario("cnn-dm", [], cnn, "article", "highlights") if i.split == "test"]
    write("cnn_dailymail_helm_0shot_0.txt", prompt(adapter(3, 0), [], cnn_inst[0]))
    write("cnn_dailymail_helm_0shot_0_reference.txt", cnn_inst[0].references[0].output.text)


def python_random_golden():
    """CPython's own random module: the sequences kvbench's PythonRandom must reproduce."""
    random.seed(0)
    bits = [random.getrandbits(32) for _ in range(3)]
    random.seed(12345)
    ranges = [random.randrange(n) for n in (1, 2, 3, 10, 100, 1000, 1, 65536, 4000000000)]
    random.seed(7)
    x = list(range(20))
    random.shuffle(x)
    write("python_random.json", json.dumps({"python": sys.version.split()[0], "seed0_getrandbits32": bits,
                                            "seed12345_randrange": ranges, "seed7_shuffle20": x}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    python_random_golden()
    mmlu_goldens(args.mirrors, args.shared)
    pg19_selection_golden(args.mirrors)
    helm_goldens(args.mirrors, args.shared)


if __name__ == "__main__":
    main()
