#!/usr/bin/python3
"""Write the small InfiniteBench fixture files tests/fixtures/infinitebench/data/<task>.jsonl.

Layout of every record: the released Hugging Face files' layout (xinrongzhang2022/InfiniteBench,
after the August 2024 re-upload): exactly the five keys, in this order,

    {"id": int, "context": str, "input": str, "answer": [...], "options": [str, ...]}

written one JSON object per line with json.dumps(record, ensure_ascii=False) (the way
InfiniteBench's own eval_utils.dump_jsonl writes JSONL).

Synthetic tasks are produced by the OFFICIAL generator, data/construct_synthetic_dataset.py of
OpenBMB/InfiniteBench @ 88b3daa6, extracted from the local git mirror into a temporary directory
and executed there. Only its size constants are changed (exact textual substitutions, each asserted
to occur exactly once; listed in PATCHES below), Python's global `random` is seeded before each
build function (the official script never seeds), and `jsonlines` (not installed) is replaced by a
ten-line stand-in. The generator's own output records are then mapped to the released layout:

    passkey, number_string: {"input","context","answer","len"} -> id = index, answer = [answer],
                            options = [], "len" dropped
    kv_retrieval:           {"id","context","input","answer"}  -> answer = [answer], options = []
    math_find, math_calc:   generate_math_qa's {"prompt","context","input","answer"}
                            -> id = index, answer = [answer] (math_calc: the answer list itself),
                            options = [], "prompt" dropped
    code_run:               build_code_run's {"context","answer","input","id"} -> answer = [answer]

kv_retrieval reads its key/value records from lost-in-the-middle's KV data, as the official script
does (it expects kv-retrieval-3000_keys.jsonl made by make_kv_retrieval_data.py); here the first
lines of the staged kv-retrieval-75_keys.jsonl.gz (same generator, 75 keys per record) are used.

The other tasks cannot be generated: they are hand-written records in the same layout, built from
public-domain text (PG #10146, Shakespeare's Hamlet I.i, Tao Yuanming's 桃花源记) and small Python
sources written for these tests. See tests/fixtures/infinitebench/data/PROVENANCE.md.

Usage:  /usr/bin/python3 scripts/infinitebench_reference/make_fixture_data.py
"""
import gzip
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ib_common as C  # noqa: E402

KV_SOURCE = "/work/shared/data/multidoc_qa_litm/kv_retrieval_data/kv-retrieval-75_keys.jsonl.gz"
KV_SOURCE_SHA256 = "eb6d61fc3473349f2b86df76757c6ab659cc929d907d24caf1c69928e03f6203"
PG_SOURCE = "/work/shared/data/pg19/10146.body_between_gutenberg_markers.txt"
PG_SOURCE_SHA256 = "5d63b0c1eecdbbd5977004f70d26c5e74ce893f78eb069fc62d101c36534090e"

SEEDS = {"passkey": 101, "number_string": 202, "kv_retrieval": 303,
         "math_find": 404, "math_calc": 505, "code_run": 606}

# (old, new) exact substitutions in data/construct_synthetic_dataset.py
PATCHES = [
    # build_number_string: 12 noise lines, needle every 6 lines, 1 key per position -> 3 records
    ("    num_noise = [2610, 5220]\n    step = [45, 90]\n    repeat_time = 10\n",
     "    num_noise = [2610, 12]\n    step = [45, 6]\n    repeat_time = 1\n"),
    # build_passkey: only the first length, 12 noise lines, step 6, 1 key per position -> 3 records
    ("    num_noise = [326, 652, 1305, 2610, 5220, 10440]\n",
     "    num_noise = [12, 652, 1305, 2610, 5220, 10440]\n"),
    ("    repeat_time = 5\n    for i in range(0,4):\n",
     "    repeat_time = 1\n    for i in range(0,1):\n"),
    # build_kv_retrieval: 3 samples of 12 keys each (answer at depths 0, 4, 8)
    ("    nsample = [500, 500]\n    nnoise = [928, 2500]\n",
     "    nsample = [500, 3]\n    nnoise = [928, 12]\n"),
    # generate_math_qa: one sample per task per call
    ("    num_samples = 50\n", "    num_samples = 1\n"),
    # build_code_run: 3 levels of 3 functions (ids in 1..18), 2 examples
    ("    MAX_NUM_FUNC = 550\n", "    MAX_NUM_FUNC = 9\n"),
    ("    n_list = [2, 4, 6, 8, 10]\n", "    n_list = [3]\n"),
    ("        for _ in range(80):\n", "        for _ in range(2):\n"),
]
MATH_FIND_LENGTH = 100   # official: 60000
MATH_FIND_TASKS = ["largest number", "second smallest number", "median"]
MATH_CALC_LENGTH = 16    # official: 30000
MATH_CALC_SAMPLES = 2


# ----------------------------------------------------------------------------- jsonlines stand-in
class _JsonLines:
    def __init__(self, path, mode="r"):
        self._f = open(path, mode, encoding="utf-8")

    def __iter__(self):
        for line in self._f:
            if line.strip():
                yield json.loads(line)

    def write_all(self, rows):
        for r in rows:
            self._f.write(json.dumps(r) + "\n")

    def close(self):
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def load_generator(ref_dir):
    src_path = os.path.join(ref_dir, "data", "construct_synthetic_dataset.py")
    with open(src_path, encoding="utf-8") as f:
        src = f.read()
    for old, new in PATCHES:
        n = src.count(old)
        assert n == 1, f"patch target found {n} times: {old!r}"
        src = src.replace(old, new)
    C.stub_module("jsonlines", open=_JsonLines)
    ns = {"__name__": "construct_synthetic_dataset", "__file__": src_path}
    exec(compile(src, src_path + " (size-patched)", "exec"), ns)
    return ns


def released(rows, answer_is_list=False, keep_id=False):
    out = []
    for i, r in enumerate(rows):
        ans = r["answer"]
        out.append({
            "id": r["id"] if keep_id else i,
            "context": r["context"],
            "input": r["input"],
            "answer": ans if answer_is_list else [ans],
            "options": [],
        })
    return out


def synthetic(gen, workdir):
    os.chdir(workdir)
    sys.dont_write_bytecode = True  # code_run re-imports a rewritten functions_module.py
    data = {}

    random.seed(SEEDS["passkey"])
    gen["build_passkey"]()
    data["passkey"] = released(C.read_jsonl("passkey_8192.jsonl"))

    random.seed(SEEDS["number_string"])
    gen["build_number_string"]()
    data["number_string"] = released(C.read_jsonl("number_string.jsonl"))

    with open(KV_SOURCE, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == KV_SOURCE_SHA256
    with gzip.open(KV_SOURCE, "rt", encoding="utf-8") as fin, \
            open("kv-retrieval-3000_keys.jsonl", "w", encoding="utf-8") as fout:
        for _ in range(3):
            fout.write(fin.readline())
    random.seed(SEEDS["kv_retrieval"])
    gen["build_kv_retrieval"]()
    data["kv_retrieval"] = released(C.read_jsonl("kv_retrieval.jsonl"), keep_id=True)

    random.seed(SEEDS["math_find"])
    rows = gen["generate_math_qa"](MATH_FIND_LENGTH, 0, 99, tasks=MATH_FIND_TASKS)
    data["math_find"] = released(rows)

    random.seed(SEEDS["math_calc"])
    rows = []
    for _ in range(MATH_CALC_SAMPLES):
        rows += gen["generate_math_qa"](MATH_CALC_LENGTH, 0, 99, tasks=["expression"])
    data["math_calc"] = released(rows, answer_is_list=True)

    random.seed(SEEDS["code_run"])
    gen["build_code_run"]()
    rows = C.read_jsonl("code_run.jsonl")
    for r in rows:  # independent check of the generator's answer
        ns = {}
        exec(r["context"].split("\n\n", 1)[1], ns)
        call = r["input"].split("return value of ")[1].split(". Your")[0]
        assert eval(call, ns) == r["answer"], (call, r["answer"])
    data["code_run"] = released(rows, keep_id=True)
    return data


# ----------------------------------------------------------------------------- hand-written tasks
def pg_excerpt(start, end):
    """The text of PG #10146 from the phrase `start` up to and including `end`."""
    with open(PG_SOURCE, "rb") as f:
        raw = f.read()
    assert hashlib.sha256(raw).hexdigest() == PG_SOURCE_SHA256
    text = raw.decode("utf-8").replace("\r\n", "\n")
    i = text.index(start)
    j = text.index(end, i) + len(end)
    return text[i:j]


BOOK_A = lambda: pg_excerpt("If James M. Goodhue could revisit", "may not be wholly\ndevoid of interest.")  # noqa: E731
BOOK_B = lambda: pg_excerpt("In 1858, when the first Atlantic cable", "some\nlittle time before their competitors.")  # noqa: E731
BOOK_C = lambda: pg_excerpt("Mr. Moore, the business manager of the Minnesotian, went",
                            "divided it up among his employes.")  # noqa: E731

HAMLET = (
    "BERNARDO: Who's there?\n"
    "FRANCISCO: Nay, answer me: stand, and unfold yourself.\n"
    "BERNARDO: Long live the king!\n"
    "FRANCISCO: Bernardo?\n"
    "BERNARDO: He.\n"
    "FRANCISCO: You come most carefully upon your hour.\n"
    "BERNARDO: 'Tis now struck twelve; get thee to bed, Francisco.\n"
    "FRANCISCO: For this relief much thanks: 'tis bitter cold,\nAnd I am sick at heart.\n"
    "BERNARDO: Have you had quiet guard?\n"
    "FRANCISCO: Not a mouse stirring.\n"
    "BERNARDO: Well, good night.\nIf you do meet Horatio and Marcellus,\n"
    "The rivals of my watch, bid them make haste.\n"
    "FRANCISCO: I think I hear them. Stand, ho! Who's there?\n"
    "HORATIO: Friends to this ground.\n"
    "MARCELLUS: And liegemen to the Dane.\n"
    "FRANCISCO: Give you good night.\n"
    "MARCELLUS: O, farewell, honest soldier:\nWho hath relieved you?\n"
    "FRANCISCO: Bernardo has my place.\nGive you good night.\n"
    "MARCELLUS: Holla! Bernardo!\n"
    "BERNARDO: Say,\nWhat, is Horatio there?\n"
    "HORATIO: A piece of him.\n"
    "BERNARDO: Welcome, Horatio: welcome, good Marcellus.\n"
)

TAOHUAYUAN = (
    "晋太元中，武陵人捕鱼为业。缘溪行，忘路之远近。忽逢桃花林，夹岸数百步，中无杂树，芳草鲜美，落英缤纷。"
    "渔人甚异之，复前行，欲穷其林。林尽水源，便得一山，山有小口，仿佛若有光。便舍船，从口入。"
    "初极狭，才通人。复行数十步，豁然开朗。土地平旷，屋舍俨然，有良田美池桑竹之属。阡陌交通，鸡犬相闻。"
)

CODE_DEBUG_0 = '''import os


def read_config(path):
    with open(path) as f:
        return dict(line.strip().split("=", 1) for line in f if "=" in line)


def normalize_name(name):
    return name.strip().lower().replace(" ", "_")


def build_output_path(base, name):
    return os.path.join(base, normalize_name(name) + ".txt")


def count_words(text):
    return len(text.split())


class Report:
    def __init__(self, title):
        self.title = title
        self.lines = []

    def add_line(self, line):
        self.lines.append(line)

    def render(self):
        header = self.title.upper()
        body = "\\n".join(self.lines)
        return header + "\\n" + body + undefined_footer


def summarize(paths):
    total = 0
    for p in paths:
        with open(p) as f:
            total += count_words(f.read())
    return total
'''

CODE_DEBUG_1 = '''def parse_int_list(text):
    return [int(x) for x in text.split(",") if x.strip()]


def merge_counts(a, b):
    result = dict(a)
    for key, value in b.items():
        result[key] = result.get(key, 0) + value
    return result


def top_k(counts, k):
    ordered = sorted(counts.items(), key=lambda kv: kv[1], reverse=True)
    return ordered[:k]


def mean(values):
    return sum(values) / len(value)


def describe(values):
    return {"n": len(values), "mean": mean(values), "max": max(values)}
'''


def hand_written():
    a, b, c = BOOK_A(), BOOK_B(), BOOK_C()
    d = {}

    def rec(i, context, inp, answer, options=()):
        return {"id": i, "context": context, "input": inp, "answer": answer, "options": list(options)}

    d["longbook_sum_eng"] = [
        rec(0, a, "", [
            "The writer imagines James M. Goodhue touring the St. Paul newspaper offices of his day and "
            "marvelling at the web-perfecting press, the linotype and the mailing machine, contrasting "
            "them with the hand presses and hand compositors of fifty years earlier, when a whole daily "
            "paper was produced by a pressman, a few compositors, two editors and a business manager."]),
        rec(1, b, "", [
            "In 1858 St. Paul waited for news of the first Atlantic cable. The steamboats Gray Eagle and "
            "Itasca raced up the river and arrived almost together; a Gray Eagle passenger threw a Dubuque "
            "Herald with the Queen's message ashore, a Minnesotian messenger caught it, and the "
            "Minnesotian printed an extra before its competitors."]),
    ]
    d["longbook_choice_eng"] = [
        rec(0, a, "How many compositors would it take if the forms of the Sunday Pioneer Press had to "
                  "be set up 600 times?", ["5,000"], ["600", "800", "1,000", "5,000"]),
        rec(1, b, "Which boat carried the passenger who threw the Dubuque Herald to the shore?",
            ["Gray Eagle"], ["Itasca", "Gray Eagle", "War Eagle", "Northern Belle"]),
        rec(2, c, "What did Mr. Moore bring down from the capitol the day after the decision?",
            ["A bag of gold containing $4,000"],
            ["A bag of gold containing $4,000", "A Hoe press", "A Hoe proof press", "A large quantity of type"]),
    ]
    d["longbook_qa_eng"] = [
        rec(0, a, "How many impressions an hour could the old hand press make?", ["240"]),
        rec(1, a, "Who is imagined revisiting the earth and touring the newspaper offices of St. Paul?",
            ["James M. Goodhue"]),
        rec(2, b, "Which newspaper got out an extra with the Queen's message first?",
            ["the Minnesotian", "Minnesotian"]),
    ]
    d["longbook_qa_chn"] = [
        rec(0, TAOHUAYUAN, "渔人是哪里人？", ["武陵"]),
        rec(1, TAOHUAYUAN, "渔人沿着什么前行而发现了桃花林？", ["溪", "缘溪行"]),
    ]
    mask0 = HAMLET.replace("FRANCISCO: Bernardo has my place.", "$$MASK$$: Bernardo has my place.")
    mask1 = HAMLET.replace("BERNARDO: 'Tis now struck twelve;", "$$MASK$$: 'Tis now struck twelve;")
    assert mask0 != HAMLET and mask1 != HAMLET
    d["longdialogue_qa_eng"] = [
        rec(0, mask0, "Which character is $$MASK$$ ?", ["FRANCISCO"]),
        rec(1, mask1, "Which character is $$MASK$$ ?", ["BERNARDO"]),
    ]
    d["code_debug"] = [
        rec(0, CODE_DEBUG_0, "", ["Report.render"],
            ["count_words", "Report.render", "build_output_path", "normalize_name"]),
        rec(1, CODE_DEBUG_1, "", ["mean"], ["top_k", "merge_counts", "mean", "parse_int_list"]),
    ]
    return d


def main():
    tmp = tempfile.mkdtemp(prefix="ib_fixture_")
    cwd = os.getcwd()
    try:
        ref = os.path.join(tmp, "ref")
        os.makedirs(ref)
        C.extract(C.IB_MIRROR, C.IB_COMMIT, ref, ["data/construct_synthetic_dataset.py"])
        gen = load_generator(ref)
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        data = synthetic(gen, work)
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp)
    data.update(hand_written())
    os.makedirs(C.DATA_DIR, exist_ok=True)
    for task in C.TASKS:
        rows = data[task]
        for r in rows:
            assert list(r) == ["id", "context", "input", "answer", "options"], r.keys()
        with open(os.path.join(C.DATA_DIR, f"{task}.jsonl"), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(f"{task:20s} {len(rows)} records, context chars "
              f"{[len(r['context']) for r in rows]}", file=sys.stderr)


if __name__ == "__main__":
    main()
