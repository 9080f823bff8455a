#!/usr/bin/env python3
"""Record lm-evaluation-harness's gpqa_diamond_cot_zeroshot prompts and gold letters for kvbench's
GPQA fixture (tests/fixtures/reasoning/gpqa_prompts.json), by running the harness's own
process_docs (lm_eval/tasks/gpqa/cot_zeroshot/utils.py) and rendering its doc_to_text (the task
YAML's Jinja template) with jinja2.

As lm-eval's simple_evaluate does before the task is built, random.seed(0) (DEFAULT_RANDOM_SEED)
seeds Python's global generator; process_docs then shuffles each document's four choices in
dataset order with random.shuffle. The CSV is read with the csv module (datasets' CSV builder reads
the same strings); a stand-in Dataset.map applies the function row by row, in order, as datasets'
map does.

Usage: /usr/bin/python3 scripts/reasoning_reference/record_gpqa_prompts.py --lm-eval CHECKOUT [--commit SHA]
  (CHECKOUT holds lm_eval/tasks/gpqa, e.g. `git archive <commit> lm_eval/tasks/gpqa | tar -x -C CHECKOUT`)
"""
import argparse
import csv
import json
import os
import random
import re

import jinja2

from common import load_module

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
TASK = "lm_eval/tasks/gpqa/cot_zeroshot"


class Dataset:
    def __init__(self, rows):
        self.rows = rows

    def map(self, fn):
        return Dataset([{**r, **fn(r)} for r in self.rows])


def doc_to_text_template(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'^doc_to_text: "(.*)"$', text, re.M)
    return json.loads('"' + m.group(1) + '"')  # the YAML double-quoted scalar's escapes (\n) as JSON's


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lm-eval", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--csv", default=os.path.join(ROOT, "tests", "fixtures", "reasoning", "gpqa_diamond_fixture.csv"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "reasoning", "gpqa_prompts.json"))
    args = ap.parse_args()
    utils = load_module("gpqa_utils", os.path.join(args.lm_eval, TASK, "utils.py"))
    template = jinja2.Template(doc_to_text_template(os.path.join(args.lm_eval, TASK, "_gpqa_cot_zeroshot_yaml")),
                               keep_trailing_newline=True)
    with open(args.csv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    random.seed(0)
    docs = utils.process_docs(Dataset(rows)).rows
    out = {"reference": {"repo": "EleutherAI/lm-evaluation-harness", "commit": args.commit,
                         "code": [TASK + "/utils.py process_docs", TASK + "/_gpqa_cot_zeroshot_yaml doc_to_text"],
                         "seed": "random.seed(0), lm-eval's DEFAULT_RANDOM_SEED"},
           "file": os.path.relpath(args.csv, ROOT),
           "cases": [{"id": d["Record ID"], "prompt": template.render(**d), "choices": d["choices"], "answer": d["answer"]}
                     for d in docs]}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(docs)} prompts -> {args.out}")


if __name__ == "__main__":
    main()
