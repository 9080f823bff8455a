#!/usr/bin/env python3
"""Record the prompts R-KV's run_math.py builds for the first records of kvbench's bundled
reasoning sets (tests/fixtures/reasoning/rkv_prompts.json), by importing run_math.py itself.

run_math.py imports torch, transformers and rkv.monkeypatch at module level; transformers and rkv
are replaced by empty stand-ins (only prompt_template and dataset2key are read, nothing runs).
main() sets example["question"] = example[dataset2key[name][0]] and formats
prompt_template.format(**example); this does the same per record.

Usage: /usr/bin/python3 scripts/reasoning_reference/record_rkv_prompts.py --rkv CHECKOUT [--commit SHA]
"""
import argparse
import json
import os
import subprocess
import sys
import types

from common import load_module

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
SETS = {"math": "data/reasoning/math500/test.jsonl", "aime24": "data/reasoning/aime24/test.jsonl"}


def stub(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rkv", required=True)
    ap.add_argument("--commit", default=None)
    ap.add_argument("--records", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "reasoning", "rkv_prompts.json"))
    args = ap.parse_args()
    commit = args.commit or subprocess.run(["git", "-C", args.rkv, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    stub("transformers", AutoModelForCausalLM=object, AutoTokenizer=object)
    stub("rkv")
    stub("rkv.monkeypatch", replace_llama=None, replace_qwen2=None, replace_qwen3=None)
    stub("tqdm", tqdm=lambda x, **k: x)
    run_math = load_module("run_math", os.path.join(args.rkv, "run_math.py"))
    out = {"rkv_commit": commit, "prompt_template": run_math.prompt_template, "sets": {}}
    for name, path in SETS.items():
        rows = []
        with open(os.path.join(ROOT, path)) as f:
            for index, line in enumerate(f):
                if index >= args.records:
                    break
                example = json.loads(line)
                example["question"] = example[run_math.dataset2key[name][0]]
                rows.append({"line": index + 1, "prompt": run_math.prompt_template.format(**example)})
        out["sets"][name] = {"file": path, "max_length": run_math.dataset2max_length[name], "question_key": run_math.dataset2key[name][0], "prompts": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
