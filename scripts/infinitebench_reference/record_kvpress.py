#!/usr/bin/python3
"""Record the rows kvpress's InfiniteBench dataset builder makes from the fixture records.

Reference: NVIDIA/kvpress, evaluation/benchmarks/infinite_bench/create_huggingface_dataset.py at the
HEAD of the local bare mirror (/work/.mirror/NVIDIA+kvpress/repo; the commit is written into the
output). Nothing of it is copied into kvbench: at run time the file is `git archive`d into a
temporary directory and executed there AS WRITTEN (it transforms every task at import and pushes
the result to the Hub). Only the `datasets` library is replaced:

  load_dataset("xinrongzhang2022/InfiniteBench", features=ft)
      -> {task: split} for the 12 fixture files tests/fixtures/infinitebench/data/<task>.jsonl,
         whose to_pandas() is a real pandas DataFrame (columns id, context, input, answer, options)
         shaped like what datasets + pyarrow give for these features: list columns become numpy
         object arrays, and `answer`/`options` elements are cast to strings as pyarrow casts
         JSON values to Value("string") (str unchanged; int -> decimal digits; float -> shortest
         round-trip digits without a trailing ".0", e.g. 60.0 -> "60", 49.5 -> "49.5"; see CAST_NOTE).
  Dataset.from_pandas(df).push_to_hub(repo, config_name=task, split="test")
      -> captures df's rows instead of uploading.
  Features / Sequence / Value -> inert placeholders.

pandas is the real package (Debian's python3-pandas 1.5.3: `apt-get install python3-pandas`).

Output: tests/fixtures/infinitebench/kvpress_rows.json, per task the pushed rows in order:
context, question, answer_prefix, answer (list of str), task, max_new_tokens.

Usage:  /usr/bin/python3 scripts/infinitebench_reference/record_kvpress.py
"""
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ib_common as C  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

REL_PATH = "evaluation/benchmarks/infinite_bench/create_huggingface_dataset.py"
OUT = os.path.join(C.FIXTURE_DIR, "kvpress_rows.json")
CAST_NOTE = ("answer/options values cast to strings as pyarrow casts int64/double to string "
             "(int: decimal; double: Arrow's FloatToStringFormatter = double-conversion ToShortest "
             "without a trailing '.0', e.g. 60.0 -> '60'). Emulated here, not run: pyarrow/datasets "
             "are not installed on the recording machine.")


def cast_to_string(v):
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        raise TypeError("bool in a string column")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        # Arrow's FloatToStringFormatter: double-conversion ToShortest, flags
        # EMIT_POSITIVE_EXPONENT_SIGN only, decimal notation for exponents in [-6, 10).
        if not math.isfinite(v) or not (v == 0 or 1e-6 <= abs(v) < 1e10):
            raise ValueError(f"{v!r}: outside the range this emulation covers")
        if v == int(v):
            return str(int(v))
        return repr(v)
    raise TypeError(f"cannot cast {type(v).__name__} to Value('string')")


def as_object_array(values):
    arr = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        arr[i] = cast_to_string(v)
    return arr


class _Split:
    def __init__(self, rows):
        self.rows = rows

    def to_pandas(self):
        return pd.DataFrame({
            "id": pd.Series([int(r["id"]) for r in self.rows], dtype="int64"),
            "context": [r["context"] for r in self.rows],
            "input": [r["input"] for r in self.rows],
            "answer": [as_object_array(r["answer"]) for r in self.rows],
            "options": [as_object_array(r["options"]) for r in self.rows],
        })


def install_datasets_stub(pushed, data):
    class Placeholder:
        def __init__(self, *a, **k):
            pass

    def load_dataset(name, features=None, **kw):
        assert name == "xinrongzhang2022/InfiniteBench", name
        return {task: _Split(rows) for task, rows in data.items()}

    class Dataset:
        def __init__(self, df):
            self.df = df

        @staticmethod
        def from_pandas(df):
            return Dataset(df.copy())

        def push_to_hub(self, repo, config_name, split):
            assert repo == "MaxJeblick/InfiniteBench" and split == "test"
            pushed[config_name] = self.df

    C.stub_module("datasets", load_dataset=load_dataset, Dataset=Dataset,
                  Features=Placeholder, Sequence=Placeholder, Value=Placeholder)


def plain(v):
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.tolist()]
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, np.integer):
        return int(v)
    return v


def main():
    data = C.fixture_records()
    pushed = {}
    install_datasets_stub(pushed, data)
    commit = C.resolve(C.KVPRESS_MIRROR, C.KVPRESS_COMMIT)
    with tempfile.TemporaryDirectory() as tmp:
        C.extract(C.KVPRESS_MIRROR, commit, tmp, [REL_PATH])
        path = os.path.join(tmp, REL_PATH)
        with open(path, encoding="utf-8") as f:
            src = f.read()
        exec(compile(src, path, "exec"), {"__name__": "create_huggingface_dataset", "__file__": path})

    rows = {}
    for task in C.TASKS:
        df = pushed[task]
        assert list(df.columns) == ["context", "question", "answer_prefix", "answer", "task", "max_new_tokens"]
        rows[task] = [{k: plain(v) for k, v in rec.items()} for rec in df.to_dict("records")]
    out = {
        "source": {
            "repo": "NVIDIA/kvpress", "commit": commit, "file": REL_PATH,
            "recorded_by": "scripts/infinitebench_reference/record_kvpress.py",
            "python": sys.version.split()[0], "pandas": pd.__version__, "numpy": np.__version__,
            "fixture_data": "tests/fixtures/infinitebench/data/<task>.jsonl",
            "stubs": ["datasets (load_dataset serves the fixture files, push_to_hub captures the rows)"],
            "cast": CAST_NOTE,
            "notes": [
                "rows[task][i] is pushed row i (fixture record i) with the columns in pushed order; "
                "answer is a list of strings (longbook_choice_eng, code_debug: [the option letter]).",
                "evaluation/evaluate.py runs rows grouped by identical context (pandas groupby, sorted "
                "by context), one prefill per group, questions of the group in row order; "
                "max_new_tokens = the config's max_new_tokens or the row's.",
            ],
        },
        "rows": rows,
    }
    C.write_compact_json(out, OUT)
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
