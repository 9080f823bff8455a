#!/usr/bin/python3
"""Record InfiniteBench reference scores by running the official scorer.

The reference is OpenBMB/InfiniteBench at commit 88b3daa6 (src/compute_scores.py
and the published predictions under results/<model>/preds_<task>.jsonl). Nothing
from it is copied here: this script extracts that commit from a local git mirror
into a temporary directory (or uses an already extracted checkout given with
--ref-dir), imports src/compute_scores.py from there, and writes what the official
functions returned to tests/fixtures/infinitebench/scores.json.

Usage (Debian's /usr/bin/python3, no extra packages):

    /usr/bin/python3 scripts/infinitebench_reference/record.py \
        [--mirror /work/.mirror/OpenBMB+InfiniteBench/repo] [--commit 88b3daa6...] \
        [--ref-dir DIR] [--out tests/fixtures/infinitebench/scores.json]

For every results/<model>/preds_<task>.jsonl of the checkout (task in TASKS below,
longbook_sum_eng excluded) the file is read exactly as compute_scores() does
(iter_jsonl -> get_labels -> get_preds), every example is scored with
get_score_one(pred, label, task, model) and the task mean with
get_score(labels, preds, task, model); model is the results folder name (so
math_calc gets its "gpt4" special case). "mean" is over ALL examples of the file;
"examples" keeps the first KEEP of them, and "mean_first_60" is the mean of their
scores. If the official code raises, the error text is recorded instead.

What is stubbed, and why it does not change the recorded values:
  * evaluate: only used for ROUGE_SCORER = evaluate.load("rouge"), which is only
    used by get_score_one_longbook_sum_eng. The stub's compute() raises
    NotImplementedError; longbook_sum_eng is not recorded.
  * args: src/args.py imports eval_utils (torch etc.); parse_args() is only called
    under __main__, so a stub module whose parse_args raises is installed.
  * tqdm: only if it is not installed; replaced by an identity function (progress bar).
"""
import argparse
import importlib.util
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import types

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MIRROR = "/work/.mirror/OpenBMB+InfiniteBench/repo"
DEFAULT_COMMIT = "88b3daa6989da2fbe0077170d7a3c84c25d5ae58"
DEFAULT_OUT = os.path.join(REPO_ROOT, "tests", "fixtures", "infinitebench", "scores.json")
TASKS = [
    "passkey", "number_string", "kv_retrieval", "longbook_choice_eng",
    "longbook_qa_eng", "longbook_qa_chn", "longdialogue_qa_eng", "math_find",
    "math_calc", "code_run", "code_debug",
]
KEEP = 60
LONG_PRED = 2000


# --------------------------------------------------------------------------- stubs
class _NoRouge:
    def compute(self, *args, **kwargs):
        raise NotImplementedError("ROUGE (longbook_sum_eng) is not recorded by this script")


def install_stubs():
    ev = types.ModuleType("evaluate")
    ev.load = lambda *a, **k: _NoRouge()
    sys.modules["evaluate"] = ev

    args_mod = types.ModuleType("args")

    def parse_args():
        raise RuntimeError("args.parse_args is stubbed; compute_scores __main__ is not run")

    args_mod.parse_args = parse_args
    sys.modules["args"] = args_mod

    try:
        import tqdm  # noqa: F401
        return "tqdm: real package"
    except ImportError:
        tq = types.ModuleType("tqdm")
        tq.tqdm = lambda it=None, *a, **k: it
        sys.modules["tqdm"] = tq
        return "tqdm: stubbed (identity)"


# --------------------------------------------------------------------------- checkout
def git(mirror, *args, binary=False):
    out = subprocess.run(["git", "-C", mirror, *args], check=True, capture_output=True)
    return out.stdout if binary else out.stdout.decode()


def extract(mirror, commit, dest):
    """Extract every blob of `commit` that the mirror actually holds.

    Returns the list of paths whose blobs are absent from the mirror."""
    missing, present = [], []
    for line in git(mirror, "ls-tree", "-r", commit).splitlines():
        meta, path = line.split("\t", 1)
        _mode, typ, sha = meta.split()
        if typ != "blob":
            continue
        ok = subprocess.run(["git", "-C", mirror, "cat-file", "-e", sha],
                            capture_output=True).returncode == 0
        (present if ok else missing).append(path)
    data = git(mirror, "archive", "--format=tar", commit, "--", *present, binary=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.extractall(dest)
    return missing


def load_compute_scores(ref_dir):
    src = os.path.join(ref_dir, "src")
    sys.path.insert(0, src)
    spec = importlib.util.spec_from_file_location("compute_scores", os.path.join(src, "compute_scores.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --------------------------------------------------------------------------- record
def record_file(cs, path, model, task):
    entry = {"model": model, "task": task}
    try:
        raw = list(cs.iter_jsonl(path))
        labels = cs.get_labels(raw)
        preds = cs.get_preds(raw, task)
    except Exception as e:  # reading failed with the official code
        entry.update(mean=None, mean_first_60=None, error=f"{type(e).__name__}: {e}", examples=[])
        return entry, 0
    entry["n_examples"] = len(preds)
    try:
        entry["mean"] = cs.get_score(labels, preds, task, model)
    except Exception as e:
        entry["mean"] = None
        entry["error"] = f"{type(e).__name__}: {e}"
    examples, kept_scores, long_preds = [], [], 0
    for pred, label in list(zip(preds, labels))[:KEEP]:
        ex = {"pred": pred, "label": label}
        if isinstance(pred, str) and len(pred) > LONG_PRED:
            long_preds += 1
        try:
            ex["score"] = cs.get_score_one(pred, label, task, model)
            kept_scores.append(ex["score"])
        except Exception as e:
            ex["score"] = None
            ex["error"] = f"{type(e).__name__}: {e}"
        examples.append(ex)
    entry["n_kept"] = len(examples)
    if len(kept_scores) == len(examples) and examples:
        entry["mean_first_60"] = sum(kept_scores) / len(kept_scores)
    else:
        entry["mean_first_60"] = None
    entry["examples"] = examples
    return entry, long_preds


def dedup_math_calc_labels(files):
    """Replace each kept math_calc label by a reference into one shared table."""
    table, index = [], {}
    for entry in files:
        if entry["task"] != "math_calc":
            continue
        for ex in entry["examples"]:
            label = ex["label"]
            nested = isinstance(label, list) and len(label) == 1 and isinstance(label[0], list)
            inner = label[0] if nested else label
            if not (isinstance(inner, list) and all(type(x) is int for x in inner)):
                continue  # unexpected shape: keep it inline, as in the file
            key = json.dumps(inner)
            if key not in index:
                index[key] = len(table)
                table.append(inner)
            # keep key order pred, label_ref, score
            new = {"pred": ex["pred"], "label_ref": {"list": index[key], "nested": nested}}
            new.update((k, v) for k, v in ex.items() if k not in ("pred", "label"))
            ex.clear()
            ex.update(new)
    return table


def _c(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def write_json(out, f):
    """Compact JSON, one kept example / label list per line (diffable, small)."""
    f.write("{\n" + _c("source") + ":" + json.dumps(out["source"], ensure_ascii=False, indent=1) + ",\n")
    f.write(_c("math_calc_label_lists") + ":[\n")
    f.write(",\n".join(_c(x) for x in out["math_calc_label_lists"]))
    f.write("\n],\n" + _c("files") + ":[\n")
    chunks = []
    for entry in out["files"]:
        head = {k: v for k, v in entry.items() if k != "examples"}
        body = _c(head)[:-1] + ',"examples":['
        if entry["examples"]:
            body += "\n" + ",\n".join(_c(ex) for ex in entry["examples"]) + "\n"
        chunks.append(body + "]}")
    f.write(",\n".join(chunks))
    f.write("\n]\n}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default=DEFAULT_MIRROR)
    ap.add_argument("--commit", default=DEFAULT_COMMIT)
    ap.add_argument("--ref-dir", default=None, help="already extracted checkout (skips extraction)")
    ap.add_argument("--out", default=DEFAULT_OUT)
    a = ap.parse_args()

    tqdm_note = install_stubs()
    tmp = None
    missing = []
    if a.ref_dir:
        ref_dir = a.ref_dir
    else:
        tmp = tempfile.TemporaryDirectory()
        ref_dir = tmp.name
        missing = extract(a.mirror, a.commit, ref_dir)
    cs = load_compute_scores(ref_dir)

    files, long_total = [], 0
    results_dir = os.path.join(ref_dir, "results")
    models = sorted(d for d in os.listdir(results_dir) if os.path.isdir(os.path.join(results_dir, d)))
    for model in models:
        for task in TASKS:
            rel = f"results/{model}/preds_{task}.jsonl"
            path = os.path.join(ref_dir, rel)
            if not os.path.exists(path):
                reason = ("blob absent from the git mirror" if rel in missing
                          else "file not in the reference commit")
                files.append({"model": model, "task": task, "mean": None, "mean_first_60": None,
                              "error": f"not scored: {reason}", "examples": []})
                continue
            entry, n_long = record_file(cs, path, model, task)
            long_total += n_long
            files.append(entry)
            print(f"{model:14s} {task:22s} n={entry.get('n_examples')} mean={entry['mean']}"
                  + (f" ERROR {entry['error']}" if entry.get("error") else ""), file=sys.stderr)

    label_lists = dedup_math_calc_labels(files)
    out = {
        "source": {
            "repo": "OpenBMB/InfiniteBench",
            "commit": a.commit,
            "scorer": "src/compute_scores.py (iter_jsonl, get_labels, get_preds, get_score_one, get_score)",
            "recorded_by": "scripts/infinitebench_reference/record.py",
            "python": sys.version.split()[0],
            "stubs": ["evaluate (load().compute raises NotImplementedError)",
                      "args (parse_args raises)", tqdm_note],
            "tasks": TASKS,
            "excluded_tasks": ["longbook_sum_eng (needs ROUGE via `evaluate`)"],
            "examples_kept_per_file": KEEP,
            "mean": "get_score over ALL examples of the file",
            "mean_first_60": "mean of get_score_one over the kept examples",
            "missing_from_mirror": missing,
            "preds_longer_than_2000_chars_kept_whole": long_total,
            "readme_table": "not recorded: compute_scores.py has no per-model table function",
            "math_calc_labels": ("math_calc labels are lists of ~15k ints, identical across models "
                                 "(some files nest them as [[...]]). To keep the fixture small each "
                                 "kept math_calc example has, instead of \"label\", \"label_ref\": "
                                 "{\"list\": k, \"nested\": b}; the label as in the file is "
                                 "math_calc_label_lists[k] if not b else [math_calc_label_lists[k]]. "
                                 "Nothing is truncated."),
        },
        "math_calc_label_lists": label_lists,
        "files": files,
    }
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        write_json(out, f)
    print(f"wrote {a.out}: {len(files)} files, {long_total} preds > {LONG_PRED} chars", file=sys.stderr)
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
