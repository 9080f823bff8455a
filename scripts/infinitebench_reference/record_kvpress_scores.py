#!/usr/bin/python3
"""Record what NVIDIA/kvpress's InfiniteBench scorer returns on real model predictions.

Reference: NVIDIA/kvpress, evaluation/benchmarks/infinite_bench/calculate_metrics.py at the HEAD
of the local bare mirror (/work/.mirror/NVIDIA+kvpress/repo; the resolved commit is written into
the output). Nothing of it is copied into kvbench: at run time the file is read with `git show`
into a temporary directory under /tmp and imported from there, unchanged.

Predictions: OpenBMB/InfiniteBench @ 88b3daa6 results/<model>/preds_<task>.jsonl (read with `git
show` from /work/.mirror/OpenBMB+InfiniteBench/repo) for MODELS below; each file is read with the
official src/compute_scores.py's iter_jsonl / get_labels / get_preds (also imported from a `git
show` copy; `evaluate` and `args` stubbed as in record.py). The official scorer is used ONLY to
read the files and to pick varied cases (see pick()); nothing it returns is written.

What reaches kvpress's scorer: evaluation/evaluate.py does
    df = load_dataset("MaxJeblick/InfiniteBench", data_dir=task, split="test").to_pandas()
adds df["predicted_answer"] (str) and calls calculate_metrics(df), which does
    get_score(df["answer"].tolist(), df["predicted_answer"].tolist(), df["task"][0], "dummy_model")
    -> get_score_one(pred, label, task, "dummy_model") per row, mean of the floats.
`answer` is a Sequence(Value("string")) column, so each label is what pyarrow's to_pandas gives a
list<string> cell: a 1-D numpy object array of Python str (NOT a list). This script builds exactly
that: label = numpy object array of the kvpress answer strings (see to_kvpress_answer), and calls
    calculate_metrics(pd.DataFrame({"predicted_answer": [...], "answer": [...], "task": task}))
for the task means and get_score_one(pred, label_array, task, "dummy_model") per case.

Ground truth -> kvpress answer (create_huggingface_dataset.py applied to the dataset `answer`):
  * longbook_choice_eng, code_debug: official ground_truth is [option text, letter]
    (InfiniteBench get_answer); kvpress stores ["ABCD"[options.index(answer)]] = [letter].
  * every other task: the dataset answer as a list (a bare str/int/float is wrapped in a list,
    math_calc's [[...]] is unwrapped once), each element cast to string as datasets/pyarrow cast
    to Value("string") -- record_kvpress.cast_to_string: int -> decimal digits, float -> Arrow's
    shortest round-trip form WITHOUT ".0" (48.0 -> "48"), not Python's str() ("48.0").

Output: tests/fixtures/infinitebench/kvpress_scores.json
  {"source": {...}, "tasks": {task: {"cases": [{"model", "index", "prediction", "label", "score"}],
                                     "calculate_metrics": mean, "calculate_metrics_by_model": {...}}
                              or   {"error": "Type: message", "examples_checked": n, ..., "example": {...}}}}
  (a raising task's "example" is one case it raised on; a label longer than 20 values is cut to
  "label_head" (first 20) + "label_len")

Usage:  /usr/bin/python3 scripts/infinitebench_reference/record_kvpress_scores.py
"""
import importlib.util
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ib_common as C  # noqa: E402
from record_kvpress import cast_to_string, CAST_NOTE  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

KV_REL = "evaluation/benchmarks/infinite_bench/calculate_metrics.py"
IB_SCORER_REL = "src/compute_scores.py"
OUT = os.path.join(C.FIXTURE_DIR, "kvpress_scores.json")
MODELS = ["claude2", "gpt4", "kimi", "yi-34b-200k"]
PER_FILE = 40
LONG_PRED = 2000
EXAMPLE_LABEL_MAX = 20
KV_MODEL_NAME = "dummy_model"  # what calculate_metrics passes
TASKS = [
    "passkey", "number_string", "kv_retrieval", "longbook_choice_eng",
    "longbook_qa_eng", "longbook_qa_chn", "longdialogue_qa_eng", "math_find",
    "math_calc", "code_run", "code_debug", "longbook_sum_eng",
]


# --------------------------------------------------------------------------- loading
def git_show(mirror, commit, rel, dest_dir):
    text = C.git(mirror, "show", f"{commit}:{rel}")
    path = os.path.join(dest_dir, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def import_file(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def install_stubs():
    """Stubs for modules the two scorer files import that are not installed / must not run."""
    notes = []
    try:
        import tqdm  # noqa: F401
        notes.append("tqdm: real package")
    except ImportError:
        C.stub_module("tqdm", tqdm=lambda it=None, *a, **k: it)
        notes.append("tqdm: stubbed (identity)")

    class _NoRouge:
        def compute(self, *a, **k):
            raise NotImplementedError("ROUGE not available")

    # Only for the OFFICIAL compute_scores.py (used to read files / pick cases):
    C.stub_module("evaluate", load=lambda *a, **k: _NoRouge())

    def parse_args():
        raise RuntimeError("stub")

    C.stub_module("args", parse_args=parse_args)
    notes.append("evaluate, args: stubbed for the official compute_scores.py only (file reading, "
                 "case picking); kvpress's calculate_metrics.py imports only json, re, string, "
                 "collections, tqdm")
    return notes


# --------------------------------------------------------------------------- labels
def to_kvpress_answer(task, ground_truth):
    """Official ground_truth -> the list of str kvpress's dataset holds in `answer`."""
    if task in ("longbook_choice_eng", "code_debug"):
        assert isinstance(ground_truth, list) and len(ground_truth) == 2 and ground_truth[1] in "ABCD"
        return [ground_truth[1]]
    v = ground_truth
    if not isinstance(v, list):
        v = [v]
    if task == "math_calc" and len(v) == 1 and isinstance(v[0], list):
        v = v[0]
    return [cast_to_string(x) for x in v]


def as_row_label(answer):
    """A list<string> cell as pyarrow's to_pandas gives it: 1-D numpy object array of str."""
    arr = np.empty(len(answer), dtype=object)
    for i, s in enumerate(answer):
        arr[i] = s
    return arr


def make_df(task, preds, answers):
    df = pd.DataFrame({
        "predicted_answer": list(preds),
        "answer": pd.Series([as_row_label(a) for a in answers], dtype=object),
        "task": task,
    })
    for x in df["answer"].tolist():
        assert isinstance(x, np.ndarray) and x.dtype == object and x.ndim == 1
    return df


def has_float(v):
    return isinstance(v, float) or (isinstance(v, list) and any(has_float(x) for x in v))


def err_text(e):
    return f"{type(e).__name__}: {e}"


def kv_score(kv, pred, answer, task):
    try:
        return kv.get_score_one(pred, as_row_label(answer), task, KV_MODEL_NAME), None
    except Exception as e:  # noqa: BLE001
        return None, err_text(e)


def official_score(ib, pred, label, task, model):
    try:
        return ib.get_score_one(pred, label, task, model)
    except Exception:  # noqa: BLE001
        return None


# --------------------------------------------------------------------------- picking
def bucket(score):
    if score == 0:
        return 0
    if score == 1:
        return 2
    return 1


def pick(cands):
    """Up to PER_FILE varied cases from one file.

    cands: dicts with index, prediction, answer, score, official (in file order). Duplicates of
    (prediction, answer) are dropped; predictions longer than LONG_PRED chars are used only if
    short ones run out. The rest are taken round-robin over the buckets
    (kvpress score 0 / in (0,1) / 1) x (equals the official score or not), each bucket in file
    order; the picked cases are returned in file order."""
    seen, short, long_ = set(), [], []
    for c in cands:
        key = (c["prediction"], tuple(c["answer"]))
        if key in seen:
            continue
        seen.add(key)
        (long_ if len(c["prediction"]) > LONG_PRED else short).append(c)
    chosen = []
    for pool in (short, long_):
        buckets = {}
        for c in pool:
            k = (bucket(c["score"]), c["official"] is not None and c["official"] == c["score"])
            buckets.setdefault(k, []).append(c)
        queues = [buckets[k] for k in sorted(buckets)]
        while len(chosen) < PER_FILE and any(queues):
            for q in queues:
                if q and len(chosen) < PER_FILE:
                    chosen.append(q.pop(0))
    return sorted(chosen, key=lambda c: c["index"])


# --------------------------------------------------------------------------- record
def read_file(ib, path, task):
    raw = list(ib.iter_jsonl(path))
    return ib.get_preds(raw, task), ib.get_labels(raw)


def record_task(kv, ib, task, files):
    """files: {model: path}. Returns the task entry."""
    per_model = {}
    errors = {}
    n_checked = 0
    first_example = None
    for model, path in files.items():
        preds, labels = read_file(ib, path, task)
        cands = []
        for i, (pred, label) in enumerate(zip(preds, labels)):
            assert isinstance(pred, str), (model, task, i)
            answer = to_kvpress_answer(task, label)
            score, err = kv_score(kv, pred, answer, task)
            n_checked += 1
            if err is not None:
                errors[err] = errors.get(err, 0) + 1
                # example: the first one, or the first whose ground truth holds a float (shows the cast)
                if first_example is None or (not first_example["float"] and has_float(label)):
                    first_example = {"model": model, "index": i, "prediction": pred,
                                     "label": answer, "float": has_float(label)}
                continue
            assert isinstance(score, float), (task, type(score))
            cands.append({"index": i, "prediction": pred, "answer": answer, "score": score,
                          "official": official_score(ib, pred, label, task, model)})
        # the entry point itself, on the whole file
        try:
            full = kv.calculate_metrics(make_df(task, preds, [to_kvpress_answer(task, x) for x in labels]))
            full_err = None
        except Exception as e:  # noqa: BLE001
            full, full_err = None, err_text(e)
        per_model[model] = {"cands": cands, "full": full, "full_err": full_err, "n": len(preds)}

    if errors:
        # a raising task: it must raise on every example, always with the same error
        assert len(errors) == 1 and all(not m["cands"] for m in per_model.values()), (task, errors)
        (err, count), = errors.items()
        first_example.pop("float")
        if len(first_example["label"]) > EXAMPLE_LABEL_MAX:  # math_calc: ~15k values
            label = first_example.pop("label")
            first_example["label_len"] = len(label)
            first_example["label_head"] = label[:EXAMPLE_LABEL_MAX]
        assert count == n_checked
        for m in per_model.values():
            assert m["full_err"] == err, (task, m["full_err"], err)
        return {
            "error": err,
            "examples_checked": n_checked,
            "files_checked": {model: m["n"] for model, m in per_model.items()},
            "raises_on_every_example": True,
            "calculate_metrics_raises_same": True,
            "example": first_example,
        }

    cases = []
    by_model = {}
    for model, m in per_model.items():
        chosen = pick(m["cands"])
        assert m["full_err"] is None
        model_cases = [{"model": model, "index": c["index"], "prediction": c["prediction"],
                        "label": c["answer"], "score": c["score"]} for c in chosen]
        cases.extend(model_cases)
        df = make_df(task, [c["prediction"] for c in model_cases], [c["label"] for c in model_cases])
        by_model[model] = kv.calculate_metrics(df)
        assert by_model[model] == sum(c["score"] for c in model_cases) / len(model_cases)
    df = make_df(task, [c["prediction"] for c in cases], [c["label"] for c in cases])
    total = kv.calculate_metrics(df)
    assert total == sum(c["score"] for c in cases) / len(cases)
    return {
        "n_cases": len(cases),
        "calculate_metrics": total,
        "calculate_metrics_by_model": by_model,
        "calculate_metrics_full_file": {model: m["full"] for model, m in per_model.items()},
        "full_file_examples": {model: m["n"] for model, m in per_model.items()},
        "cases": cases,
    }


NOTES = [
    "Row type: each label is a 1-D numpy object array of Python str (pyarrow to_pandas of a "
    "list<string> cell), never a list, so every `isinstance(label, list)` branch in "
    "calculate_metrics.py is skipped. passkey/number_string (label == str) and kv_retrieval "
    "(label in words) still work because the arrays have exactly one element: the comparison "
    "gives a 1-element bool array whose truth value / float() is that element.",
    "Per case: get_score_one(pred, label, task, 'dummy_model') -> float(score) (bool -> 0.0/1.0; "
    "for passkey/number_string/code_run the score is a 1-element numpy bool array, float() of it "
    "is that element -- numpy >= 1.25 adds a DeprecationWarning, same value).",
    "Aggregation (calculate_metrics -> get_score): plain arithmetic mean of the per-example floats "
    "over all rows of the DataFrame, in [0, 1]; no x100, no rounding; the task is df['task'][0] "
    "(evaluate.py loads one data_dir = one task); the float itself is the metrics.json content. "
    "'calculate_metrics' here = that function on a DataFrame of all recorded cases of the task "
    "(models in MODELS order, each in file order); 'calculate_metrics_by_model' = on that model's "
    "recorded cases; 'calculate_metrics_full_file' = on the whole results file.",
    "code_run scores but is always 0.0: the label is a string ('4'), the prediction is converted with "
    "int(words[-1]), and object-array == int is elementwise False.",
    "code_debug raises IndexError: label[1] on the 1-element [letter] array.",
    "math_find raises TypeError: label is an ndarray (would be a str if it were a list), "
    "neither int nor float.",
    "math_calc raises AssertionError: assert isinstance(label, list) fails for the ndarray.",
    "longbook_sum_eng raises AssertionError in get_score_one before the label is looked at.",
    "Label cast decision (math_find, math_calc, code_run): Arrow's cast, e.g. float 48.0 -> '48', "
    "int -4 -> '-4', not Python str() ('48.0'); consistent with kvpress_rows.json. It does not "
    "change any recorded score: math_find/math_calc raise regardless, code_run is 0 regardless.",
    "longbook_choice_eng/code_debug labels are [letter] (create_huggingface_dataset.py), not the "
    "official [option text, letter].",
]

# Where kvpress's per-example logic differs from InfiniteBench's official get_score_one
# (src/compute_scores.py @ 88b3daa6); tasks not listed behave identically on these labels.
DIFFERENCES = {
    "longbook_choice_eng": (
        "kvpress first does m = re.search(r'\\b[A-D]\\b(?!.*\\b[A-D]\\b)', pred.strip()) "
        "(Python re, Unicode \\b, '.' does not cross '\\n': i.e. the LAST standalone A-D of the FIRST "
        "line that has one); if m and m.group(0) in label -> 1, "
        "otherwise it falls through to the official logic unchanged. With the [letter] label the "
        "official text matches (pred == option text, after_prefix.startswith(option text)) can no "
        "longer hit."),
    "longdialogue_qa_eng": (
        "kvpress: 1 if any(item.upper() in pred.strip().upper() for item in label) -- substring, "
        "every label item. Official: label[0] in the upper-cased words of pred after replacing "
        "\\n : \" ' . , ? ! { } by spaces -- whole word, first label only."),
    "code_run": ("same code, but the label is a string, so label == int(...) is never true: always 0 "
                 "(official compares against an int label)."),
    "code_debug": (
        "kvpress adds the same regex step with [A-J] before the prefix logic and replaces the "
        "official pred[:2] in ('X.', 'X:') test by pred.startswith(letter) or "
        "pred.startswith(fn_name) after normalisation -- unreachable: label[1] raises first."),
    "kv_retrieval/passkey/number_string/code_run/math_find": (
        "kvpress unwraps list labels (label[0]) where the official kv_retrieval does not; no effect "
        "on ndarray labels."),
    "math_find/math_calc": "raise on kvpress's string labels (see notes); official scores them.",
    "longbook_sum_eng": "kvpress raises AssertionError; official uses ROUGE-Lsum.",
    "aggregation": "identical get_score (mean); model_name is always 'dummy_model' (no gpt4 math_calc shift).",
}


def write_json(out, path):
    """source indented; one case per line."""
    c = lambda o: json.dumps(o, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n" + c("source") + ":" + json.dumps(out["source"], ensure_ascii=False, indent=1))
        f.write(",\n" + c("tasks") + ":{\n")
        parts = []
        for task, entry in out["tasks"].items():
            head = {k: v for k, v in entry.items() if k != "cases"}
            if "cases" in entry:
                body = c(head)[:-1] + ',"cases":[\n' + ",\n".join(c(x) for x in entry["cases"]) + "\n]}"
            else:
                body = c(head)
            parts.append(c(task) + ":" + body)
        f.write(",\n".join(parts) + "\n}\n}\n")


def main():
    stub_notes = install_stubs()
    kv_commit = C.resolve(C.KVPRESS_MIRROR, C.KVPRESS_COMMIT)
    ib_commit = C.resolve(C.IB_MIRROR, C.IB_COMMIT)
    tasks = {}
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        kv = import_file("kvpress_ib_calculate_metrics",
                         git_show(C.KVPRESS_MIRROR, kv_commit, KV_REL, os.path.join(tmp, "kvpress")))
        ib = import_file("ib_compute_scores",
                         git_show(C.IB_MIRROR, ib_commit, IB_SCORER_REL, os.path.join(tmp, "ib")))
        for task in TASKS:
            files = {m: git_show(C.IB_MIRROR, ib_commit, f"results/{m}/preds_{task}.jsonl",
                                 os.path.join(tmp, "ib")) for m in MODELS}
            tasks[task] = record_task(kv, ib, task, files)
            e = tasks[task]
            print(f"{task:22s} " + (f"ERROR {e['error']} ({e['examples_checked']} examples)" if "error" in e
                  else f"{e['n_cases']} cases, mean {e['calculate_metrics']:.4f}"), file=sys.stderr)

    out = {
        "source": {
            "repo": "NVIDIA/kvpress",
            "commit": kv_commit,
            "file": KV_REL,
            "scorer": "calculate_metrics(df) -> get_score -> get_score_one(pred, label, task, 'dummy_model')",
            "recorded_by": "scripts/infinitebench_reference/record_kvpress_scores.py",
            "python": sys.version.split()[0], "numpy": np.__version__, "pandas": pd.__version__,
            "stubs": stub_notes,
            "predictions": {
                "repo": "OpenBMB/InfiniteBench", "commit": ib_commit,
                "files": "results/<model>/preds_<task>.jsonl", "models": MODELS,
                "cases_per_file": f"up to {PER_FILE}, picked for variety (see pick() in the script); "
                                  "index = 0-based example index in the file",
            },
            "label": ("kvpress dataset `answer` (list of str) made from the official ground_truth: "
                      "choice/code_debug -> [letter]; else the answer list with elements cast to "
                      "string. Passed to the scorer as a numpy object array."),
            "cast": CAST_NOTE,
            "notes": NOTES,
            "differences_vs_official": DIFFERENCES,
            "tasks_scored": [t for t in TASKS if "error" not in tasks[t]],
            "tasks_raising": [t for t in TASKS if "error" in tasks[t]],
        },
        "tasks": tasks,
    }
    write_json(out, OUT)
    json.load(open(OUT, encoding="utf-8"))  # well-formed
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
