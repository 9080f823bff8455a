"""Shared helpers of the InfiniteBench / kvpress recorder scripts in this folder.

Nothing of the reference repositories is copied into kvbench: the scripts extract the
reference commits from local bare git mirrors into a temporary directory at run time
(`git archive`) and import / execute the official code from there.

    OpenBMB/InfiniteBench  @ 88b3daa6989da2fbe0077170d7a3c84c25d5ae58
    NVIDIA/kvpress         @ 8bb29b9 (HEAD of the mirror when recorded; see KVPRESS_COMMIT)
"""
import io
import json
import os
import subprocess
import sys
import tarfile
import types

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE_DIR = os.path.join(REPO_ROOT, "tests", "fixtures", "infinitebench")
DATA_DIR = os.path.join(FIXTURE_DIR, "data")

IB_MIRROR = "/work/.mirror/OpenBMB+InfiniteBench/repo"
IB_COMMIT = "88b3daa6989da2fbe0077170d7a3c84c25d5ae58"
KVPRESS_MIRROR = "/work/.mirror/NVIDIA+kvpress/repo"
KVPRESS_COMMIT = "HEAD"

# The 12 tasks in the order of InfiniteBench's DATA_NAME_TO_PATH.
TASKS = [
    "passkey", "number_string", "kv_retrieval",
    "longbook_sum_eng", "longbook_choice_eng", "longbook_qa_eng", "longbook_qa_chn",
    "longdialogue_qa_eng", "math_find", "math_calc", "code_run", "code_debug",
]


def git(mirror, *args, binary=False):
    out = subprocess.run(["git", "--git-dir", mirror, *args], check=True, capture_output=True)
    return out.stdout if binary else out.stdout.decode()


def resolve(mirror, commit):
    return git(mirror, "rev-parse", commit).strip()


def extract(mirror, commit, dest, paths):
    """`git archive` the given top-level paths of `commit` into `dest`."""
    data = git(mirror, "archive", "--format=tar", commit, "--", *paths, binary=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.extractall(dest)


def stub_module(name, **attrs):
    mod = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(mod, k, v)
    sys.modules[name] = mod
    return mod


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def fixture_records():
    """{task: [record, ...]} from tests/fixtures/infinitebench/data/<task>.jsonl."""
    return {t: read_jsonl(os.path.join(DATA_DIR, f"{t}.jsonl")) for t in TASKS}


def write_compact_json(obj, path):
    """indent=1 JSON, ensure_ascii=False, trailing newline."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)
        f.write("\n")
