#!/usr/bin/env python3
"""Record kvpress's AIME25 and MATH500 grading (evaluation/benchmarks/{aime25,math500}/calculate_metrics.py:
extract_boxed, score_aime, calculate_metrics' "answered"; math500's takes the first box) on the outputs of tests/fixtures/reasoning/grader_cases.json
and a few more, as tests/fixtures/reasoning/kvpress_aime_cases.json. Runs kvpress's own module
(pandas from Debian).

Usage: /usr/bin/python3 scripts/reasoning_reference/record_kvpress_aime.py --kvpress CHECKOUT --commit SHA
"""
import argparse
import json
import os

import pandas as pd

from common import load_module

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "tests", "fixtures", "reasoning")
EXTRA = [
    ("The answer is \\boxed{204}.", "204"),
    ("\\boxed{ 204 }", "204"),
    ("\\boxed{204} then \\boxed{25}", "25"),
    ("no box: 204", "204"),
    ("204", 204),
    ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
    ("boxed{7", "7"),
    ("\\boxed{070}", 70),
    ("", "5"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kvpress", required=True)
    ap.add_argument("--commit", required=True)
    args = ap.parse_args()
    def load(benchmark):
        return load_module(benchmark + "_metrics", os.path.join(args.kvpress, "evaluation", "benchmarks", benchmark, "calculate_metrics.py"))

    module, math500 = load("aime25"), load("math500")
    with open(os.path.join(FIXTURES, "grader_cases.json")) as f:
        math = json.load(f)["hendrycks_math"]
    pairs = [(c["output"], c["gold"]) for c in math] + EXTRA
    cases = []
    for output, gold in pairs:
        metrics = module.calculate_metrics(pd.DataFrame([{"predicted_answer": output, "answer": gold}]))
        cases.append({"output": output, "gold": str(gold), "extract_boxed": module.extract_boxed(output),
                      "correct": bool(module.score_aime(output, gold)), "answered": int(metrics["answered"]),
                      "math500_extract_boxed": math500.extract_boxed(output), "math500_correct": bool(math500.score_aime(output, gold))})
    with open(os.path.join(FIXTURES, "kvpress_aime_cases.json"), "w") as f:
        json.dump({"kvpress_commit": args.commit, "files": ["evaluation/benchmarks/aime25/calculate_metrics.py", "evaluation/benchmarks/math500/calculate_metrics.py"], "cases": cases},
                  f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
