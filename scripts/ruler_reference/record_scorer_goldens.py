#!/usr/bin/python3
"""Records RULER's and kvpress's RULER scores on adversarial cases by running their own code:
RULER scripts/eval/evaluate.py (postprocess_pred) with eval/synthetic/constants.py (string_match_*),
and kvpress evaluation/benchmarks/ruler/calculate_metrics.py. pandas and NeMo are not installable
here: evaluate.py only imports them at module level (stubbed), and calculate_metrics runs on a tiny
stand-in DataFrame with the four operations it calls (column apply, assignment, groupby, tolist).

  /usr/bin/python3 scripts/ruler_reference/record_scorer_goldens.py /tmp/ruler_ref /tmp/kvpress_ref tests/fixtures/ruler
"""
import importlib.util
import json
import sys
import types

ruler_dir, kvpress_dir, out_dir = sys.argv[1:4]


class Series(list):
    def apply(self, fn):
        return Series(fn(x) for x in self)

    def tolist(self):
        return list(self)


class DataFrame:
    def __init__(self, columns):
        self.columns = {k: Series(v) for k, v in columns.items()}

    def __getitem__(self, key):
        return self.columns[key]

    def __setitem__(self, key, value):
        self.columns[key] = Series(value)

    def groupby(self, key):
        groups = {}
        for i, k in enumerate(self.columns[key]):
            groups.setdefault(k, []).append(i)
        for k in sorted(groups):
            yield k, DataFrame({c: [v[i] for i in groups[k]] for c, v in self.columns.items()})


pandas = types.ModuleType("pandas")
pandas.DataFrame = DataFrame
sys.modules["pandas"] = pandas
for name in ["nemo", "nemo.collections", "nemo.collections.asr", "nemo.collections.asr.parts",
             "nemo.collections.asr.parts.utils", "nemo.collections.asr.parts.utils.manifest_utils"]:
    sys.modules[name] = types.ModuleType(name)
sys.modules["nemo.collections.asr.parts.utils.manifest_utils"].read_manifest = None
sys.modules["nemo.collections.asr.parts.utils.manifest_utils"].write_manifest = None
import nltk
nltk.data.path.insert(0, "/tmp/nltk_data")


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sys.argv = ["evaluate.py", "--data_dir", "/tmp"]
evaluate = load("ruler_evaluate", f"{ruler_dir}/scripts/eval/evaluate.py")
constants = load("ruler_constants", f"{ruler_dir}/scripts/eval/synthetic/constants.py")
kvpress = load("kvpress_ruler_metrics", f"{kvpress_dir}/evaluation/benchmarks/ruler/calculate_metrics.py")

CASES = [
    ("  The numbers are 1234567 and 7654321.\n", ["1234567", "7654321"]),
    ("only 1234567", ["1234567", "7654321"]),
    ("\x00\x01The answer:\tPARIS\x1f", ["paris"]),
    ("a\tb", ["ab"]),
    ("a\tb", ["a\nb"]),
    ("\u0130stanbul is big", ["i\u0307stanbul"]),
    ("\u039f\u0394\u039f\u03a3 road", ["\u03bf\u03b4\u03bf\u03c2"]),
    ("STRASSE", ["stra\u00dfe"]),
    ("\u2003 spaced \u2003", ["spaced"]),
    ("", ["x"]),
    ("The special magic words are: apple-pie, Banana-Split", ["apple-pie", "banana-split", "cherry-tart"]),
    ("\x1c\x1dX\x1e", ["x"]),
]
out = {"cases": []}
for pred, refs in CASES:
    case = {"prediction": pred, "references": refs}
    p = evaluate.postprocess_pred(pred, {})
    case["ruler_postprocessed"] = p
    case["ruler_string_match_all"] = constants.string_match_all([p], [refs])
    case["ruler_string_match_part"] = constants.string_match_part([p], [refs])
    out["cases"].append(case)
# Whole tasks: RULER's score over every case, and kvpress's per-task numbers (its groupby).
preds = [evaluate.postprocess_pred(p, {}) for p, _ in CASES]
refs = [r for _, r in CASES]
out["ruler_task_all"] = constants.string_match_all(preds, refs)
out["ruler_task_part"] = constants.string_match_part(preds, refs)
df = DataFrame({"predicted_answer": [p for p, _ in CASES], "answer": refs,
                "task": ["niah_single_1" if i % 2 else "qa_1" for i in range(len(CASES))]})
out["kvpress"] = kvpress.calculate_metrics(df)
out["kvpress_tasks"] = df["task"].tolist()
json.dump(out, open(f"{out_dir}/scorer_cases.json", "w"), ensure_ascii=False, indent=1)
print(json.dumps(out["kvpress"]), out["ruler_task_all"], out["ruler_task_part"])
