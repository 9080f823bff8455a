#!/usr/bin/python3
"""Record InfiniteBench's official prompts, truncation and answer handling on the fixture records.

Reference: OpenBMB/InfiniteBench @ 88b3daa6989da2fbe0077170d7a3c84c25d5ae58. Nothing of it is
copied into kvbench: at run time this script `git archive`s src/ of that commit from the local
bare mirror (/work/.mirror/OpenBMB+InfiniteBench/repo) into a temporary directory, puts that
src/ on sys.path and imports the official modules from there:

  * eval_utils.create_prompt / get_answer / create_msgs / truncate_input / MODEL_TO_PROMPT_TEMPLATE
    / DATA_NAME_TO_MAX_NEW_TOKENS
  * eval_yarn_mistral, eval_chatglm, eval_yi_200k: truncate_input / truncate_by_tokens /
    TRUNCATE_LEN (the three copies are run and checked to agree)
  * compute_scores: first_int_match / split_retrieval_answer / normalize_answer / normalize_zh_answer

Inputs: tests/fixtures/infinitebench/data/<task>.jsonl (see make_fixture_data.py).
Output: tests/fixtures/infinitebench/prompts.json.

Stubbed imports (none of them is reached by what is recorded):
  rouge (Rouge), jieba (cut)              eval_utils' ROUGE / Chinese F1 helpers, not called
  transformers, transformers.modeling_outputs, yarn_mistral.modeling_mistral_yarn (model classes),
  vllm (LLM, SamplingParams: a plain record of its keyword arguments), evaluate (compute_scores'
  module-level ROUGE_SCORER). torch is the real package (imported, never used here).

The HF tokenizer the eval scripts call is mimicked with sentencepiece on stories260K's
tok512.model (SentencePieceAsHF below):
  encode(text)                        -> [BOS] + sp.encode(text)   (tokenizer "sp_bos": HF
                                         Llama/Mistral, add_special_tokens=True adds <s>)
                                      -> sp.encode(text)           (tokenizer "sp_nobos": a
                                         tokenizer that adds no special token, like tiktoken
                                         or Yi's add_bos_token=false)
  decode(ids, skip_special_tokens=True) -> sp.decode(ids without BOS/EOS ids)
  decode(ids)  (tiktoken-style, create_msgs) -> sp.decode(ids)
sp.encode/sp.decode are sentencepiece's own (normalization as in tok512.model, which collapses
runs of spaces and drops leading/trailing spaces; byte fallback; an incomplete UTF-8 byte
sequence decodes to one U+FFFD per byte). HF's clean_up_tokenization_spaces is NOT applied
(Llama tokenizers default it to False).

Usage:  /usr/bin/python3 scripts/infinitebench_reference/record_prompts.py
"""
import contextlib
import importlib
import io
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ib_common as C  # noqa: E402

import sentencepiece as spm  # noqa: E402

TOK_FILE = "/work/shared/models/stories260K/tok512.model"
OUT = os.path.join(C.FIXTURE_DIR, "prompts.json")

# model names of MODEL_TO_PROMPT_TEMPLATE (eval_utils) + "rwkv" (args.py choice without templates)
FAMILY_OF = {"gpt4": "gpt4", "claude2": "claude2", "kimi": "kimi", "yarn-mistral": "yarn-mistral"}
ALIASES = ["yi-6b-200k", "yi-34b-200k", "chatglm3"]
TRUNC_SOURCES = [("yarn-mistral", "passkey", 0), ("yarn-mistral", "kv_retrieval", 0),
                 ("yarn-mistral", "longbook_qa_eng", 0), ("yarn-mistral", "longbook_qa_chn", 0),
                 ("yarn-mistral", "code_run", 0), ("yarn-mistral", "math_calc", 0)]
TRUNC_LENGTHS = [127, 128, 256]
LIST_CASES = [(10, 4), (10, 5), (10, 10), (10, 11), (7, 3), (1, 1), (3, 0)]
HELPER_STRINGS = [
    "The pass key is 93857.", "08393", "  The sequence of digits is 6676633333. Remember it.",
    "-12", "no digits here", "3.5 and 7",
    'The value associated with the specified key is: "43da98d6-39da-4c79-9cd1-1544f95782a2".',
    "{'a': 'b'}\nnext: line!", "The Minnesotian, an extra!", "  An   answer, THE end.  ",
    "答案：武陵。", "（缘溪行）…", "C. Report.render",
]


class SentencePieceAsHF:
    def __init__(self, model_file, add_bos):
        self.sp = spm.SentencePieceProcessor(model_file=model_file)
        self.add_bos = add_bos
        self.bos_token_id = self.sp.bos_id()
        self.eos_token_id = self.sp.eos_id()

    def encode(self, text, add_special_tokens=True):
        ids = list(self.sp.encode(text))
        return ([self.bos_token_id] if (self.add_bos and add_special_tokens) else []) + ids

    def decode(self, ids, skip_special_tokens=False):
        ids = [int(i) for i in ids]
        if skip_special_tokens:
            ids = [i for i in ids if i not in (self.bos_token_id, self.eos_token_id)]
        return self.sp.decode(ids)


def install_stubs():
    class Anything:
        def __init__(self, *a, **k):
            self.kwargs = k

    C.stub_module("rouge", Rouge=Anything)
    C.stub_module("jieba", cut=lambda *a, **k: (_ for _ in ()).throw(NotImplementedError("jieba stub")))
    C.stub_module("transformers", AutoTokenizer=Anything)
    C.stub_module("transformers.modeling_outputs", BaseModelOutputWithPast=Anything)
    C.stub_module("yarn_mistral")
    C.stub_module("yarn_mistral.modeling_mistral_yarn", MistralForCausalLM=Anything)
    C.stub_module("vllm", LLM=Anything, SamplingParams=Anything)

    class _NoRouge:
        def compute(self, *a, **k):
            raise NotImplementedError("evaluate stub")

    C.stub_module("evaluate", load=lambda *a, **k: _NoRouge())


def err(e):
    return {"error": f"{type(e).__name__}: {e}"}


def quiet(fn, *a, **k):
    return captured(fn, *a, **k)[0]


def captured(fn, *a, **k):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ret = fn(*a, **k)
    return ret, buf.getvalue()


def main():
    install_stubs()
    tmp = tempfile.TemporaryDirectory()
    ref = tmp.name
    commit = C.resolve(C.IB_MIRROR, C.IB_COMMIT)
    C.extract(C.IB_MIRROR, commit, ref, ["src"])
    sys.path.insert(0, os.path.join(ref, "src"))
    eu = importlib.import_module("eval_utils")
    eym = importlib.import_module("eval_yarn_mistral")
    ecg = importlib.import_module("eval_chatglm")
    eyi = importlib.import_module("eval_yi_200k")
    cs = importlib.import_module("compute_scores")

    data = C.fixture_records()
    data_dir = os.path.join(ref, "data")  # create_prompt's data_dir argument (unused by it)

    # ---------------------------------------------------------------- prompts
    prompts = {}
    for model, fam in FAMILY_OF.items():
        prompts[fam] = {}
        for task in C.TASKS:
            out = []
            for eg in data[task]:
                try:
                    out.append(eu.create_prompt(dict(eg), task, model, data_dir))
                except Exception as e:  # noqa: BLE001 - the official code's own failure
                    out.append(err(e))
            prompts[fam][task] = out
    aliases = {}
    for model in ALIASES:
        for task in C.TASKS:
            for i, eg in enumerate(data[task]):
                got = eu.create_prompt(dict(eg), task, model, data_dir)
                assert got == prompts["yarn-mistral"][task][i], (model, task, i)
        aliases[model] = "yarn-mistral"
    try:
        eu.create_prompt(dict(data["passkey"][0]), "passkey", "rwkv", data_dir)
        rwkv = "no error"
    except Exception as e:  # noqa: BLE001
        rwkv = err(e)["error"]

    # ---------------------------------------------------------------- answers, gpt4 messages
    answers = {task: [eu.get_answer(dict(eg), task) for eg in data[task]] for task in C.TASKS}
    tiktoken_like = SentencePieceAsHF(TOK_FILE, add_bos=False)
    gpt4_msgs = {}
    for task in C.TASKS:
        rows = []
        for eg in data[task]:
            try:
                msgs, prompt = quiet(eu.create_msgs, tiktoken_like, dict(eg), task, "gpt4", data_dir)
                rows.append({"messages": msgs, "prompt": prompt})
            except Exception as e:  # noqa: BLE001
                rows.append(err(e))
        gpt4_msgs[task] = rows

    # ---------------------------------------------------------------- truncation
    list_trunc = []
    for n, m in LIST_CASES:
        seq = list(range(n))
        row = {"input": seq, "max_length": m,
               "eval_utils": eu.truncate_input(seq, m, manner="middle"),
               "eval_yarn_mistral": eym.truncate_input(seq, m, manner="middle")}
        assert ecg.truncate_input(seq, m) == row["eval_yarn_mistral"] == eyi.truncate_input(seq, m)
        list_trunc.append(row)

    toks = {"sp_bos": SentencePieceAsHF(TOK_FILE, add_bos=True),
            "sp_nobos": SentencePieceAsHF(TOK_FILE, add_bos=False)}
    text_trunc = []
    for fam, task, idx in TRUNC_SOURCES:
        text = prompts[fam][task][idx]
        for tname, tok in toks.items():
            for m in TRUNC_LENGTHS:
                outs = []
                for mod in (eym, ecg, eyi):
                    outs.append(captured(mod.truncate_by_tokens, text, tok, m))
                assert outs[0] == outs[1] == outs[2], (fam, task, idx, tname, m)
                output, printed = outs[0]
                counts = dict(line.split(": ") for line in printed.strip().splitlines())
                text_trunc.append({
                    "prompt": [fam, task, idx], "tokenizer": tname, "max_tokens": m,
                    "n_tokens_before": int(counts["# tokens before"]),
                    "n_tokens_after": int(counts["# tokens after"]),
                    "output": output})

    # ---------------------------------------------------------------- scorer-side parsing helpers
    helpers = []
    for s in HELPER_STRINGS:
        helpers.append({"input": s,
                        "first_int_match": cs.first_int_match(s),
                        "split_retrieval_answer": cs.split_retrieval_answer(s),
                        "normalize_answer": cs.normalize_answer(s),
                        "normalize_zh_answer": cs.normalize_zh_answer(s)})

    out = {
        "source": {
            "repo": "OpenBMB/InfiniteBench", "commit": commit,
            "recorded_by": "scripts/infinitebench_reference/record_prompts.py",
            "python": sys.version.split()[0], "sentencepiece": spm.__version__,
            "tokenizer_model": "shared/models/stories260K/tok512.model",
            "fixture_data": "tests/fixtures/infinitebench/data/<task>.jsonl",
            "stubs": ["rouge", "jieba", "transformers", "transformers.modeling_outputs",
                      "yarn_mistral.modeling_mistral_yarn", "vllm", "evaluate"],
            "notes": [
                "prompts[family][task][i] = eval_utils.create_prompt(record i, task, model) for the "
                "model names gpt4, claude2, kimi, yarn-mistral; yi-6b-200k, yi-34b-200k and chatglm3 map to "
                "yarn_mistral_templates and were checked to give exactly the yarn-mistral strings "
                "(model_aliases); an entry {\"error\": ...} is the exception the official code raises.",
                "answers[task][i] = eval_utils.get_answer(record i, task): the ground_truth the eval "
                "scripts write next to each prediction.",
                "gpt4_messages: eval_utils.create_msgs (gpt4 only) with a tiktoken-like tokenizer "
                "(sp_nobos encode, plain decode); prompt = decode(truncate_input(encode(prompt), 127000)).",
                "truncation_lists: eval_utils.truncate_input vs eval_yarn_mistral.truncate_input "
                "(== eval_chatglm / eval_yi_200k copies) on list(range(n)).",
                "truncation_text: truncate_by_tokens(prompt, tok, max_tokens) of eval_yarn_mistral "
                "(checked equal to eval_chatglm's and eval_yi_200k's); prompt = prompts[family][task][i]; "
                "n_tokens_* are what truncate_by_tokens prints (len of encode() ids, BOS included for sp_bos).",
                "scorer_helpers: compute_scores.first_int_match, split_retrieval_answer, "
                "normalize_answer, normalize_zh_answer.",
            ],
        },
        "max_new_tokens": eu.DATA_NAME_TO_MAX_NEW_TOKENS,
        "truncate_len": {"eval_yarn_mistral": eym.TRUNCATE_LEN, "eval_chatglm": ecg.TRUNCATE_LEN,
                         "eval_yi_200k": eyi.TRUNCATE_LEN, "eval_utils.create_msgs (gpt4)": 128_000 - 1000},
        "model_aliases": aliases,
        "rwkv": rwkv,
        "prompts": prompts,
        "answers": answers,
        "gpt4_messages": gpt4_msgs,
        "truncation_lists": list_trunc,
        "truncation_text": text_trunc,
        "scorer_helpers": helpers,
    }
    C.write_compact_json(out, OUT)
    tmp.cleanup()
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
