#!/usr/bin/env python3
"""Records what the official answer graders of the reasoning benchmarks return on a curated list of
model outputs, into tests/fixtures/reasoning/grader_cases.json. Nothing of the reference code is
copied into kvbench: this script imports and runs the official modules from checkouts given on the
command line, and writes down their return values (or the exception they raise).

References (the pinned commits are written into the fixture):
  EleutherAI/lm-evaluation-harness
    lm_eval/tasks/hendrycks_math/utils.py   last_boxed_only_string, remove_boxed, strip_string,
                                            is_equiv, process_results
    lm_eval/tasks/minerva_math/utils.py     last_boxed_only_string, remove_boxed,
                                            get_unnormalized_answer, normalize_final_answer, is_equiv
    lm_eval/tasks/gsm8k/gsm8k.yaml          filter_list (strict-match, flexible-extract) and
                                            metric_list (exact_match kwargs), run through
                                            lm_eval.filters.build_filter_ensemble / FilterEnsemble and
                                            lm_eval.api.registry.get_metric("exact_match")
                                            (= lm_eval/api/metrics.py exact_match_hf_evaluate)
    lm_eval/tasks/gpqa/cot_zeroshot/_gpqa_cot_zeroshot_yaml  the same, for GPQA's generative variants
                                            (generative/ and cot_n_shot/ use identical filters/metric)
  Zefan-Cai/R-KV  evaluation/  (a copy of QwenLM/Qwen2.5-Math evaluation/, see the fixture's
                                "rkv_vs_qwen_math" note): R-KV's scripts/eval.sh runs
                                evaluation/eval_math.py, whose main() extracts the prediction with
                                parser.run_execute -> parser.extract_answer (+ strip_string), parses the
                                gold with parser.parse_ground_truth and scores with
                                evaluate.evaluate -> grader.math_equal_process -> grader.math_equal in a
                                pebble ProcessPool (3 s timeout). This script calls eval_math.main() itself,
                                one case at a time, and reads back the jsonl it writes.

Stubs (only what the graders never call):
  * `lm_eval` package: its __init__.py is not executed (it only reads the installed distribution's
    version via importlib.metadata, which a plain checkout lacks, and sets HF env vars); a bare
    package object pointing at <lm-eval>/lm_eval is put in sys.modules instead.
  * `sacrebleu` (imported at the top of lm_eval/api/metrics.py; used only by BLEU/chrF/TER).
  * `datasets` (imported by hendrycks_math/utils.py, minerva_math/utils.py and R-KV's data_loader.py;
    used only by process_docs / load_dataset, which are not called).
  * `math_verify` (imported by minerva_math/utils.py; used only by process_results' "math_verify"
    metric, which is not recorded; exact_match is recomputed from is_equiv as process_results does).
Real dependencies: Debian's python3 (numpy, regex, mpmath, tqdm, dateutil, yaml, jinja2, requests)
plus apt's python3-pebble, python3-multiprocess, python3-timeout-decorator, and a --pydeps folder
with the versions the references pin, pip-installed (--no-deps --no-index --target) from source
checkouts: antlr4-python3-runtime 4.11.1 (antlr/antlr4 tag 4.11.1, runtime/Python3), sympy 1.12
(sympy/sympy tag sympy-1.12), word2number 1.1 (akshaynagpal/w2n @ 33aac8a). R-KV's vendored
latex2sympy (evaluation/latex2sympy) is put on sys.path as its README's `pip install -e .` does.

    /usr/bin/python3 scripts/reasoning_reference/record_graders.py \
        --lm-eval /tmp/lmeval --rkv /tmp/rkv --qwen-math /tmp/qwenmath --pydeps /tmp/pydeps \
        --lm-eval-commit <sha> --rkv-commit <sha> --qwen-math-commit <sha>
"""
import argparse
import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
import tempfile
import types

from common import load_module

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO_ROOT, "tests", "fixtures", "reasoning", "grader_cases.json")

from grader_cases import BS, GOLD_SOLUTION, MATH_CASES, GPQA_CHOICES, GPQA_CASES  # noqa: E402


# ---------------------------------------------------------------------------------------------
def stub_module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


load_file = load_module


def call(fn, *args):
    """The function's return value, or {"raises": ExceptionName} when it raises."""
    try:
        return jsonable(fn(*args))
    except Exception as e:  # noqa: BLE001 -- recording exactly what raises is the point
        return {"raises": type(e).__name__}


def jsonable(v):
    try:
        import numpy as np
        if isinstance(v, np.generic):
            return v.item()
    except ImportError:
        pass
    return v


def git_commit(path, given):
    if given:
        return given
    try:
        return subprocess.check_output(["git", "-C", path, "rev-parse", "HEAD"], text=True).strip()
    except Exception:  # noqa: BLE001
        sys.exit(f"cannot tell the commit of {path}: pass it explicitly")


@contextlib.contextmanager
def quiet():
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull), \
            contextlib.redirect_stderr(devnull):
        yield


def versions():
    from importlib.metadata import version
    out = {"python": sys.version.split()[0]}
    for dist, mod in [("sympy", "sympy"), ("antlr4-python3-runtime", None), ("word2number", None),
                      ("numpy", "numpy"), ("regex", "regex"), ("mpmath", "mpmath"), ("Pebble", "pebble")]:
        try:  # the distribution's version; Debian's mpmath reports 0.0.0 there, so its __version__
            out[dist] = version(dist)
        except Exception:  # noqa: BLE001
            out[dist] = None
        if out[dist] in (None, "0.0.0") and mod:
            out[dist] = importlib.import_module(mod).__version__
    return out


# ---------------------------------------------------------------------------------------------
def record_hendrycks(lm_eval_dir):
    u = load_file("hendrycks_math_utils", os.path.join(lm_eval_dir, "lm_eval", "tasks", "hendrycks_math", "utils.py"))
    rows = []
    for output, gold, note in MATH_CASES:
        gold_solution = GOLD_SOLUTION.format(gold)
        last_boxed = call(u.last_boxed_only_string, output)
        removed = call(u.remove_boxed, last_boxed)
        answer = removed if isinstance(removed, str) else None
        rows.append({
            "note": note,
            "output": output,
            "gold": gold,
            "gold_solution": gold_solution,
            "last_boxed": last_boxed,
            "remove_boxed": removed,
            "strip_string_output": call(u.strip_string, answer) if answer is not None else None,
            "strip_string_gold": call(u.strip_string, gold),
            "is_equiv": call(u.is_equiv, answer, gold),
            "process_results_exact_match": call(
                lambda: u.process_results({"solution": gold_solution}, [output])["exact_match"]),
        })
    return u, rows


def record_minerva(lm_eval_dir, hendrycks_utils):
    u = load_file("minerva_math_utils", os.path.join(lm_eval_dir, "lm_eval", "tasks", "minerva_math", "utils.py"))
    # minerva's last_boxed_only_string / remove_boxed: checked to behave as hendrycks' on every case
    same = all(call(u.last_boxed_only_string, o) == call(hendrycks_utils.last_boxed_only_string, o)
               and call(u.remove_boxed, call(u.last_boxed_only_string, o))
               == call(hendrycks_utils.remove_boxed, call(hendrycks_utils.last_boxed_only_string, o))
               for o, _, _ in MATH_CASES)
    rows = []
    for output, gold, note in MATH_CASES:
        gold_solution = GOLD_SOLUTION.format(gold)
        unnormalized = call(u.get_unnormalized_answer, output)
        answer = call(u.normalize_final_answer, unnormalized) if isinstance(unnormalized, str) else None
        # process_docs: doc["answer"] = normalize_final_answer(remove_boxed(last_boxed_only_string(solution)))
        doc_answer = call(lambda: u.normalize_final_answer(u.remove_boxed(u.last_boxed_only_string(gold_solution))))
        with quiet():
            eq = call(u.is_equiv, answer, doc_answer)
        rows.append({
            "note": note,
            "output": output,
            "gold": gold,
            "gold_solution": gold_solution,
            "get_unnormalized_answer": unnormalized,
            "normalize_final_answer": answer,
            "doc_answer": doc_answer,
            "normalize_final_answer_gold": call(u.normalize_final_answer, gold),
            "is_equiv": eq,
            "exact_match": (1 if eq is True else 0) if not isinstance(eq, dict) else eq,
        })
    return same, rows


def lm_eval_pipeline(lm_eval_dir, yaml_path):
    """Filters and metric kwargs of a task yaml, built as ConfigurableTask builds them."""
    yl = load_file("lm_eval_yaml_loader", os.path.join(lm_eval_dir, "lm_eval", "tasks", "_yaml_loader.py"))
    cfg = yl.load_yaml(yaml_path, resolve_func=False)
    from lm_eval.filters import build_filter_ensemble
    from lm_eval.api.registry import get_metric
    ensembles = []
    for fc in cfg["filter_list"]:
        components = [[f["function"], {k: f[k] for k in f if k != "function"}] for f in fc["filter"]]
        ensembles.append(build_filter_ensemble(fc["name"], components))
    (mc,) = [m for m in cfg["metric_list"] if m["metric"] == "exact_match"]
    kwargs = {k: mc[k] for k in mc if k not in ["metric", "aggregation", "higher_is_better", "hf_evaluate"]}
    metric = get_metric("exact_match", mc.get("hf_evaluate", False) is True)
    return cfg, ensembles, metric, kwargs


def run_filters(ensembles, doc, output):
    from lm_eval.api.instance import Instance
    out = {}
    for ens in ensembles:
        inst = Instance(request_type="generate_until", doc=doc, arguments=("", {}), idx=0)
        inst.resps = [output]
        ens.apply([inst])
        out[ens.name] = inst.filtered_resps[ens.name]
    return out


def record_gsm8k(lm_eval_dir):
    from lm_eval.utils import apply_template
    yaml_path = os.path.join(lm_eval_dir, "lm_eval", "tasks", "gsm8k", "gsm8k.yaml")
    cfg, ensembles, metric, kwargs = lm_eval_pipeline(lm_eval_dir, yaml_path)
    rows = []
    for output, gold_field, note in GSM8K_CASES:
        doc = {"question": "Q", "answer": gold_field}
        gold = apply_template(cfg["doc_to_target"], doc)
        filtered = run_filters(ensembles, doc, output)
        row = {"note": note, "output": output, "gold_answer_field": gold_field,
               "strict": filtered["strict-match"], "flexible": filtered["flexible-extract"]}
        for key, name in [("strict", "strict-match"), ("flexible", "flexible-extract")]:
            row[key + "_exact_match"] = call(
                lambda: metric(references=[gold], predictions=[filtered[name]], **kwargs)["exact_match"])
        rows.append(row)
    return {"filter_list": cfg["filter_list"], "exact_match_kwargs": kwargs, "doc_to_target": cfg["doc_to_target"]}, rows


def record_gpqa(lm_eval_dir):
    yaml_path = os.path.join(lm_eval_dir, "lm_eval", "tasks", "gpqa", "cot_zeroshot", "gpqa_main_cot_zeroshot.yaml")
    cfg, ensembles, metric, kwargs = lm_eval_pipeline(lm_eval_dir, yaml_path)
    rows = []
    for output, choices, gold, note in GPQA_CASES:
        doc = {"choices": list(choices), "answer": gold}
        filtered = run_filters(ensembles, doc, output)
        row = {"note": note, "output": output, "choices": list(choices), "answer": gold,
               "strict": filtered["strict-match"], "flexible": filtered["flexible-extract"]}
        for key, name in [("strict", "strict-match"), ("flexible", "flexible-extract")]:
            row[key + "_exact_match"] = call(
                lambda: metric(references=[gold], predictions=[filtered[name]], **kwargs)["exact_match"])
        rows.append(row)
    return {"filter_list": cfg["filter_list"], "exact_match_kwargs": kwargs, "doc_to_target": cfg["doc_to_target"]}, rows


# ---------------------------------------------------------------------------------------------
def rkv_run(eval_math, data_name, example, tmp):
    """R-KV's eval_math.main() on one example; the sample it writes (pred, gt, score)."""
    path = os.path.join(tmp, "in.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(dict(idx=0, **example), ensure_ascii=False) + "\n")
    args = argparse.Namespace(exp_name="rec", prompt_type="cot", base_dir=tmp, output_dir=os.path.join(tmp, "out"),
                              stop_words=["</s>", "<|im_end|>", "<|endoftext|>", "\n题目："],
                              dataset=data_name, input_path=path)
    os.makedirs(args.output_dir, exist_ok=True)  # else main() falls back to ./outputs/<output_dir>
    out_file = os.path.join(args.output_dir, "rec", data_name, "default-default_math_eval.jsonl")
    if os.path.exists(out_file):
        os.remove(out_file)
    try:
        with quiet():
            result = eval_math.main(data_name, args)
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__}
    with open(out_file, encoding="utf-8") as f:
        (sample,) = [json.loads(line) for line in f]
    return {"pred": sample["pred"][0], "gt": sample["gt"], "score": sample["score"][0],
            "timeout": result["timeout_samples"] > 0}


def record_rkv(rkv_dir):
    ev = os.path.join(rkv_dir, "evaluation")
    sys.path.insert(0, os.path.join(ev, "latex2sympy"))  # = `cd evaluation/latex2sympy && pip install -e .`
    sys.path.insert(0, ev)
    with quiet():
        import parser as rkv_parser  # noqa: E402  (R-KV's evaluation/parser.py)
        import grader as rkv_grader  # noqa: E402,F401
        import eval_math  # noqa: E402
    assert os.path.dirname(os.path.abspath(rkv_parser.__file__)) == os.path.abspath(ev)
    math_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for output, gold, note in MATH_CASES:
            gold_solution = GOLD_SOLUTION.format(gold)
            run = rkv_run(eval_math, "math", {"problem": "Q", "solution": gold_solution, "output": output}, tmp)
            row = {"note": note, "output": output, "gold": gold, "gold_solution": gold_solution,
                   "extract_answer": call(rkv_parser.extract_answer, output, "math"),
                   "strip_string_gold": call(rkv_parser.strip_string, gold)}
            if "raises" in run:
                row.update({"pred": None, "gt": None, "math_equal": run, "timeout": False})
            else:
                row.update({"pred": run["pred"], "gt": run["gt"], "math_equal": run["score"],
                            "timeout": run["timeout"]})
            math_rows.append(row)
        gsm_rows = []
        for output, gold_field, note in GSM8K_CASES:
            run = rkv_run(eval_math, "gsm8k", {"question": "Q", "answer": gold_field, "output": output}, tmp)
            gsm_rows.append(run)
    return math_rows, gsm_rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lm-eval", required=True, help="checkout of EleutherAI/lm-evaluation-harness")
    ap.add_argument("--rkv", required=True, help="checkout of Zefan-Cai/R-KV")
    ap.add_argument("--qwen-math", help="checkout of QwenLM/Qwen2.5-Math (only diffed against R-KV's copy)")
    ap.add_argument("--pydeps", help="folder prepended to sys.path (antlr4 4.11.1, sympy 1.12, word2number 1.1)")
    ap.add_argument("--lm-eval-commit")
    ap.add_argument("--rkv-commit")
    ap.add_argument("--qwen-math-commit")
    ap.add_argument("--out", default=DEFAULT_OUT)
    a = ap.parse_args()
    if a.pydeps:
        sys.path.insert(0, os.path.abspath(a.pydeps))

    # stubs (see the module docstring)
    pkg = types.ModuleType("lm_eval")
    pkg.__path__ = [os.path.join(os.path.abspath(a.lm_eval), "lm_eval")]
    sys.modules["lm_eval"] = pkg
    stub_module("sacrebleu")
    stub_module("datasets", Dataset=object, load_dataset=None, concatenate_datasets=None)

    def _math_verify_unavailable(*_a, **_k):
        raise NotImplementedError("math_verify is stubbed: the math_verify metric is not recorded")
    stub_module("math_verify", parse=_math_verify_unavailable, verify=_math_verify_unavailable)

    hendrycks_utils, hendrycks = record_hendrycks(a.lm_eval)
    minerva_same, minerva = record_minerva(a.lm_eval, hendrycks_utils)
    gsm8k_cfg, gsm8k = record_gsm8k(a.lm_eval)
    gpqa_cfg, gpqa = record_gpqa(a.lm_eval)
    rkv_math, rkv_gsm = record_rkv(a.rkv)
    for row, run in zip(gsm8k, rkv_gsm):
        if "raises" in run:
            row.update({"rkv_pred": None, "rkv_gt": None, "rkv_math_equal": run})
        else:
            row.update({"rkv_pred": run["pred"], "rkv_gt": run["gt"], "rkv_math_equal": run["score"]})

    rkv_vs_qwen = None
    if a.qwen_math:
        diffs = {}
        for f in ["parser.py", "grader.py", "evaluate.py", "utils.py"]:
            p = subprocess.run(["diff", "-q", os.path.join(a.qwen_math, "evaluation", f),
                                os.path.join(a.rkv, "evaluation", f)], capture_output=True)
            diffs[f] = "identical" if p.returncode == 0 else "differs"
        l2s = subprocess.run(["diff", "-rq", os.path.join(a.qwen_math, "evaluation", "latex2sympy"),
                              os.path.join(a.rkv, "evaluation", "latex2sympy")], capture_output=True)
        diffs["latex2sympy/"] = "identical" if l2s.returncode == 0 else "differs"
        rkv_vs_qwen = {
            "qwen_math_commit": git_commit(a.qwen_math, a.qwen_math_commit),
            "files": diffs,
            "note": "R-KV's evaluation/ is Qwen2.5-Math's evaluation/ with cosmetic edits; the functions "
                    "recorded here (extract_answer, strip_string, math_equal) differ only in parser.py's "
                    "omni-math branch of parse_ground_truth and grader.py comments",
        }

    data = {
        "written_by": "scripts/reasoning_reference/record_graders.py",
        "lm_eval_commit": git_commit(a.lm_eval, a.lm_eval_commit),
        "rkv_commit": git_commit(a.rkv, a.rkv_commit),
        "rkv_vs_qwen_math": rkv_vs_qwen,
        "versions": versions(),
        "conventions": {
            "raises": "a value {\"raises\": \"ExceptionName\"} means the official function raised that exception",
            "gold_solution": "GOLD_SOLUTION.format(gold): the solution text given to graders that take a full "
                             "solution (hendrycks process_results, minerva process_docs, R-KV 'math' ground truth)",
            "hendrycks_math": "last_boxed = last_boxed_only_string(output); remove_boxed = remove_boxed(last_boxed); "
                              "answer = remove_boxed if it is a string else None; strip_string_output = "
                              "strip_string(answer) (null when answer is None); strip_string_gold = strip_string(gold); "
                              "is_equiv = is_equiv(answer, gold); process_results_exact_match = "
                              "process_results({'solution': gold_solution}, [output])['exact_match'] (no boxed "
                              "extraction on the output: only the text between its first and last '$')",
            "minerva_math": "get_unnormalized_answer(output); normalize_final_answer of it; doc_answer = "
                            "normalize_final_answer(remove_boxed(last_boxed_only_string(gold_solution))) "
                            "(process_docs); is_equiv(normalized, doc_answer); exact_match as process_results; "
                            "normalize_final_answer_gold = normalize_final_answer(gold). Its last_boxed_only_string "
                            "and remove_boxed are the hendrycks ones (see minerva_boxed_functions_identical)",
            "gsm8k": "filters of gsm8k.yaml (strict-match, flexible-extract, each then take_first) on [output]; "
                     "exact_match(references=[answer field], predictions=[filtered], **exact_match_kwargs); "
                     "rkv_*: R-KV eval_math.main(data 'gsm8k') pred / gt / math_equal score",
            "gpqa": "filters of gpqa/cot_zeroshot/_gpqa_cot_zeroshot_yaml on [output] with doc {choices, answer}; "
                    "exact_match(references=[answer], predictions=[filtered], **exact_match_kwargs)",
            "qwen_math": "R-KV evaluation/: extract_answer(output, 'math'); strip_string_gold = strip_string(gold); "
                         "pred / gt / math_equal: what eval_math.main('math') writes for {problem, solution: "
                         "gold_solution, output} (pred = run_execute -> extract_answer then strip_string again; "
                         "gt = extract_answer(gold_solution, 'math'); math_equal = math_equal(pred, gt) via "
                         "pebble with a 3 s timeout, timeout=true when it hit it)",
        },
        "minerva_boxed_functions_identical": minerva_same,
        "gsm8k_config": gsm8k_cfg,
        "gpqa_config": gpqa_cfg,
        "hendrycks_math": hendrycks,
        "minerva_math": minerva,
        "gsm8k": gsm8k,
        "gpqa": gpqa,
        "qwen_math": rkv_math,
    }
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", a.out, {k: len(data[k]) for k in ["hendrycks_math", "minerva_math", "gsm8k", "gpqa", "qwen_math"]})


if __name__ == "__main__":
    main()
