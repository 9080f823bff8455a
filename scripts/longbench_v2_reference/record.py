#!/usr/bin/python3
"""Record LongBench-v2 reference cases by running the official code.

The reference is THUDM/LongBench at commit 2e00731f (pred.py, result.py, prompts/,
config/ at the repository root). Nothing from it is copied here: this script
extracts that commit from a local git mirror into a temporary directory, imports
its pred.py from there (with stub modules for the packages it imports but never
uses on the paths we exercise), executes its result.py there, and writes what the
official code returned to tests/fixtures/longbench_v2/reference_cases.json.

Usage (Debian's /usr/bin/python3, no extra packages):

    /usr/bin/python3 scripts/longbench_v2_reference/record.py \
        [--mirror /work/.mirror/THUDM+LongBench/repo] [--commit 2e00731f...] \
        [--fixture tests/fixtures/longbench_v2/data_fixture.json] \
        [--out tests/fixtures/longbench_v2/reference_cases.json]

What is stubbed, and why it does not change the recorded values:
  * openai.OpenAI: a fake client whose chat.completions.create() records the
    request (model, messages, temperature, max_tokens) and returns a canned reply.
    The recorded prompt is messages[0]["content"], i.e. exactly what the official
    query_llm() sends.
  * tiktoken.encoding_for_model / transformers.AutoTokenizer: a tokenizer whose
    encode() returns one id per character. query_llm() only uses it to decide on
    middle truncation; maxlen_map[model] is set to 10**12 first, so no truncation
    happens and the tokenizer never influences the prompt.
  * datasets.load_dataset, torch.multiprocessing: only used by main(), which is
    not called.
  * tqdm: replaced by an identity function (progress bar only).
"""
import argparse
import copy
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import types

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MIRROR = "/work/.mirror/THUDM+LongBench/repo"
DEFAULT_COMMIT = "2e00731f8d0bff23dc4325161044d0ed8af94c1e"
MODEL = "gpt-4o-2024-08-06"  # not in model2path.json -> the tiktoken branch of query_llm
COT_TEXT = "Let me think. The correct answer is (A)"
FINAL_REPLY = "The correct answer is (B)"


# --------------------------------------------------------------------------- stubs
class _CharTokenizer:
    """encode() = one id per code point; only its length is ever looked at."""

    def encode(self, text, **kwargs):
        return [ord(c) for c in text]

    def decode(self, ids, **kwargs):  # never reached: no truncation happens
        raise AssertionError("truncation path reached; maxlen_map was not raised")


class _FakeCompletions:
    def __init__(self, log, replies):
        self.log, self.replies = log, replies

    def create(self, model, messages, temperature, max_tokens):
        self.log.append({"model": model, "messages": copy.deepcopy(messages),
                         "temperature": temperature, "max_tokens": max_tokens})
        reply = self.replies.pop(0)
        msg = types.SimpleNamespace(content=reply)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=msg)])


class _FakeOpenAI:
    log = []
    replies = []

    def __init__(self, base_url=None, api_key=None):
        self.chat = types.SimpleNamespace(completions=_FakeCompletions(_FakeOpenAI.log, _FakeOpenAI.replies))


def install_stubs():
    def mod(name, **attrs):
        m = types.ModuleType(name)
        for k, v in attrs.items():
            setattr(m, k, v)
        sys.modules[name] = m
        return m

    mod("openai", OpenAI=_FakeOpenAI)
    mod("tiktoken", encoding_for_model=lambda name: _CharTokenizer())
    mod("transformers", AutoTokenizer=types.SimpleNamespace(
        from_pretrained=lambda *a, **k: _CharTokenizer()))
    mod("datasets", load_dataset=lambda *a, **k: (_ for _ in ()).throw(AssertionError("main() not used")))
    mp = mod("torch.multiprocessing", Process=None)
    mod("torch", multiprocessing=mp)
    mod("tqdm", tqdm=lambda it, *a, **k: it)


# --------------------------------------------------------------------------- setup
def extract(mirror, commit, dest):
    data = subprocess.check_output(["git", "-C", mirror, "archive", commit])
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.extractall(dest)


def load_pred(ref_dir):
    install_stubs()
    cwd = os.getcwd()
    os.chdir(ref_dir)  # pred.py opens config/*.json and prompts/*.txt relative to cwd
    try:
        import importlib.util
        spec = importlib.util.spec_from_file_location("lb2_pred", os.path.join(ref_dir, "pred.py"))
        pred = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(pred)
    finally:
        os.chdir(cwd)
    pred.maxlen_map[MODEL] = 10 ** 12
    return pred


# --------------------------------------------------------------------------- extract_answer
EXTRACT_INPUTS = [
    "The correct answer is (A)",
    "The correct answer is (B).",
    "The correct answer is C",
    "The correct answer is D.",
    "The correct answer is  (C)",
    "The correct answer is  C",
    "the correct answer is (A)",
    "THE CORRECT ANSWER IS (B)",
    "The Correct Answer is (B)",
    "**The correct answer is (B)**",
    "The correct answer is **(C)**",
    "The correct answer is **C**",
    "The correct answer is (*D*)",
    "**The** correct answer is (A)",
    "The correct answer is (E)",
    "The correct answer is E",
    "The correct answer is (F)",
    "The correct answer is (a)",
    "The correct answer is a",
    "The correct answer is (AB)",
    "The correct answer is ABC",
    "The correct answer is (A) and (B)",
    "The correct answer is (E). Wait, the correct answer is (C)",
    "The correct answer is E, or rather the correct answer is (C)",
    "The correct answer is B. On reflection, the correct answer is (D)",
    "The correct answer is (B). The correct answer is (A).",
    "The correct answer is [A]",
    "The correct answer is: (A)",
    "The correct answer is\n(A)",
    "The correct answer is (\nA)",
    "Reasoning...\nThe correct answer is (D)\nbecause ...",
    "The correct answer is\tB",
    "The correct answer is\u00a0(B)",
    "The correct answer is \uff08B\uff09",
    "The correct answer is (\uff21)",
    "The correct answer is (\u0391)",
    "The correct answer is Apple",
    "The correct answer is (A) \u2014 \u6b63\u786e\u7b54\u6848",
    "\u6b63\u786e\u7b54\u6848\u662f (B)",
    "The correct answer is ()",
    "Answer: A",
    "(A)",
    "A",
    "",
    "The correct answer is (insert answer here)",
    "The correct answer is (D",
    "The correct answerr is (A)",
    "The correct answer is (C)**",
    "* * The correct answer is (B) * *",
]


def record_extract(pred):
    out = []
    for s in EXTRACT_INPUTS:
        out.append({"response": s, "pred": pred.extract_answer(s)})
    return out


# --------------------------------------------------------------------------- result.py
def _lcg(seed):
    x = seed
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield x >> 33


def make_pred_items(n, seed, none_every):
    """Deterministic prediction records in pred.py's output layout (only the
    fields result.py reads are meaningful: difficulty, length, judge, pred)."""
    g = _lcg(seed)
    items = []
    diffs, lens = ["easy", "hard"], ["short", "medium", "long"]
    for i in range(n):
        d = diffs[i % 2] if i < 6 else diffs[next(g) % 2]
        ln = lens[i % 3] if i < 6 else lens[next(g) % 3]
        answer = "ABCD"[next(g) % 4]
        if none_every and i % none_every == none_every - 1:
            p = None
        else:
            p = "ABCD"[next(g) % 4]
        items.append({"_id": "rec%s_%03d" % (seed, i), "difficulty": d, "length": ln,
                      "answer": answer, "pred": p, "judge": p == answer})
    return items


RESULT_FILES = [
    # (file name, items, on-disk format)
    ("Qwen2.5-7B-Instruct.jsonl", make_pred_items(16, 6, 5), "jsonl"),
    ("GLM-4-9B-Chat_cot.jsonl", make_pred_items(40, 2, 7), "jsonl"),
    ("toy.model.v1.json", make_pred_items(7, 3, 3), "json"),
]


def run_result_py(ref_dir, compensated):
    src = open(os.path.join(ref_dir, "result.py"), encoding="utf-8").read()
    flag = "compensated = False"
    assert src.count(flag) == 1
    if compensated:
        src = src.replace(flag, "compensated = True")
    per_file = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "results"))
        for name, items, fmt in RESULT_FILES:
            with open(os.path.join(tmp, "results", name), "w", encoding="utf-8") as f:
                if fmt == "json":
                    json.dump(items, f, ensure_ascii=False)
                else:
                    for it in items:
                        f.write(json.dumps(it, ensure_ascii=False) + "\n")
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            exec(compile(src, os.path.join(ref_dir, "result.py"), "exec"), {"__name__": "__main__"})
        finally:
            os.chdir(cwd)
        text = open(os.path.join(tmp, "result.txt"), encoding="utf-8").read()
    lines = text.split("\n")
    header = lines[0]
    for line in lines[1:]:
        per_file[line.split("\t")[0]] = line
    return text, header, per_file


def record_result(ref_dir):
    text_f, header, lines_f = run_result_py(ref_dir, False)
    text_t, header_t, lines_t = run_result_py(ref_dir, True)
    assert header == header_t
    files = []
    for name, items, fmt in RESULT_FILES:
        key = ".".join(name.split(".")[:-1])
        files.append({"file": name, "format": fmt, "model_name": key, "items": items,
                      "line_compensated_false": lines_f[key],
                      "line_compensated_true": lines_t[key]})
    return {
        "note": ("result.py run unmodified (compensated = False, as committed) on a temporary "
                 "'results' folder holding these three files; a second run used a copy of "
                 "result.py with the single line 'compensated = False' replaced by "
                 "'compensated = True' (pred None then counts 0.25). Lines are "
                 "tab-separated; result.txt has no trailing newline and its line order is "
                 "os.listdir() order, so each file's line is recorded separately."),
        "header": header,
        "files": files,
        "result_txt_compensated_false": text_f,
        "result_txt_compensated_true": text_t,
    }


# --------------------------------------------------------------------------- prompts
def run_get_pred(pred, item, cot=False, no_context=False, rag=0):
    _FakeOpenAI.log.clear()
    _FakeOpenAI.replies[:] = [COT_TEXT, FINAL_REPLY] if cot else [FINAL_REPLY]
    args = types.SimpleNamespace(model=MODEL, cot=cot, no_context=no_context, rag=rag)
    fout = io.StringIO()
    pred.get_pred([copy.deepcopy(item)], args, fout)
    assert not _FakeOpenAI.replies
    calls = [{"prompt": c["messages"][0]["content"], "messages_len": len(c["messages"]),
              "role": c["messages"][0]["role"], "model": c["model"],
              "temperature": c["temperature"], "max_tokens": c["max_tokens"]}
             for c in _FakeOpenAI.log]
    return calls, fout.getvalue()


def record_prompts(pred, fixture, ids):
    items = [it for it in fixture if it["_id"] in ids]
    assert len(items) == len(ids)
    out = []
    for item in items:
        modes = {}
        calls, line = run_get_pred(pred, item)
        modes["0shot"] = {"prompt": calls[0]["prompt"], "calls": calls, "output_line": line}
        calls, line = run_get_pred(pred, item, cot=True)
        modes["cot"] = {"prompt": calls[0]["prompt"], "cot_reply": COT_TEXT,
                        "cot_ans_prompt": calls[1]["prompt"], "calls": calls, "output_line": line}
        calls, line = run_get_pred(pred, item, no_context=True)
        modes["no_context"] = {"prompt": calls[0]["prompt"], "calls": calls, "output_line": line}
        if "retrieved_context" in item:
            calls, line = run_get_pred(pred, item, rag=2)
            modes["rag"] = {"prompt": calls[0]["prompt"], "calls": calls, "output_line": line}
        else:
            modes["rag"] = None
        out.append({"_id": item["_id"], "modes": modes})
    return out


def record_placeholder_case(pred):
    """Not a LongBench item: shows how the chained str.replace treats '$..$'
    markers that occur inside the substituted text (context / question / choices)."""
    item = {"_id": "synthetic-placeholders", "domain": "synthetic", "sub_domain": "synthetic",
            "difficulty": "easy", "length": "short",
            "question": "  Which is right? (see $C_A$ and $DOC$)\n",
            "choice_A": " alpha $C_B$ ", "choice_B": "beta $Q$", "choice_C": "\ngamma $C_D$\t",
            "choice_D": "delta $COT$", "answer": "A",
            "context": "\n\n  Body with $Q$, $C_A$, $C_D$ and $COT$ markers.  \n"}
    calls0, line0 = run_get_pred(pred, item)
    callsc, linec = run_get_pred(pred, item, cot=True)
    callsn, linen = run_get_pred(pred, item, no_context=True)
    return {"item": item, "0shot": calls0[0]["prompt"], "cot": callsc[0]["prompt"],
            "cot_ans": callsc[1]["prompt"], "no_context": callsn[0]["prompt"],
            "output_line_0shot": line0}


# --------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default=DEFAULT_MIRROR)
    ap.add_argument("--commit", default=DEFAULT_COMMIT)
    ap.add_argument("--fixture", default=os.path.join(REPO_ROOT, "tests/fixtures/longbench_v2/data_fixture.json"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "tests/fixtures/longbench_v2/reference_cases.json"))
    ap.add_argument("--prompt-ids", default="66ec356a821e116aacb1c22b,66f118e1821e116aacb26b79")
    a = ap.parse_args()

    commit = subprocess.check_output(["git", "-C", a.mirror, "rev-parse", a.commit], text=True).strip()
    fixture = json.load(open(a.fixture, encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="lbv2_ref_") as ref_dir:
        extract(a.mirror, commit, ref_dir)
        pred = load_pred(ref_dir)
        doc = {
            "source": {"repo": "THUDM/LongBench", "commit": commit,
                       "files": ["pred.py", "result.py", "prompts/*.txt", "config/model2maxlen.json"]},
            "recorded_by": "scripts/longbench_v2_reference/record.py (runs the official code; see its docstring)",
            "python": sys.version.split()[0],
            "extract": record_extract(pred),
            "result": record_result(ref_dir),
            "prompts": {
                "note": ("get_pred() run on fixture items (tests/fixtures/longbench_v2/data_fixture.json, "
                         "contexts cut to 6,000 chars) with args.model=%r, a fake OpenAI client that "
                         "records each request and replies %r (cot first stage: %r), and "
                         "maxlen_map[model]=10**12 so query_llm never truncates. 'prompt' is "
                         "messages[0]['content']. 'output_line' is what get_pred writes to fout. "
                         "rag is null: the items have no retrieved_context (nor does the HF "
                         "dataset), so pred.py's rag path cannot run on them."
                         % (MODEL, FINAL_REPLY, COT_TEXT)),
                "fixture": "tests/fixtures/longbench_v2/data_fixture.json",
                "items": record_prompts(pred, fixture, a.prompt_ids.split(",")),
                "synthetic_placeholder_case": record_placeholder_case(pred),
            },
        }
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    print("wrote", a.out)


if __name__ == "__main__":
    main()
