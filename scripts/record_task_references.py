#!/usr/bin/env python3
"""Records what the reference evaluation code feeds the model and how it scores, by RUNNING that
code (imported from checkouts outside this repository, never copied), with the stories260K
tokenizer (sentencepiece tok512.model) standing in for the HF tokenizer. The output is the test
data of tests/tasks/reference_pipelines_test.cpp (tests/tasks/golden_reference/*.json).

References (a checkout of each, at the commits recorded in the output):
  --kvcache-factory   Zefan-Cai/KVCache-Factory @7ee6be0 (Dec 2024, the version the papers ran):
                      run_longbench.py main(), run_needle_in_haystack.py LLMNeedleHaystackTester
  --headkv            FYYFU/HeadKV: run_needle_visulize.py main() (the needle score)
  --kvpress           NVIDIA/kvpress: evaluation/benchmarks/longbench/create_huggingface_dataset.py
                      (the dataset rows) and kvpress/pipeline.py preprocess()
  --litm              nelson-liu/lost-in-the-middle: get_qa_responses_from_llama_2.py
                      format_chat_prompt, prompting.get_qa_prompt
  --buzz              JunqiZhao888/buzz-llm: run_ten_doc_qa_em.py transform_to_prompt, calc_em_score

Heavy imports of the references (torch, transformers, vllm, ...) are replaced by stubs; only the
prompt/truncation/scoring code runs. Needs python3-sentencepiece, python3-numpy, python3-pydantic.
"""
import argparse
import glob
import gzip
import hashlib
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


class Stop(Exception):
    """Raised by stubs to leave the reference code once the recorded values exist."""


def stub_module(name, **attrs):
    module = types.ModuleType(name)
    module.__path__ = []  # a package, so submodules can be stubbed too

    def any_name(name):  # `from stub import X` gets a stand-in for whatever X is
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything

    module.__getattr__ = any_name
    for key, value in attrs.items():
        setattr(module, key, value)
    sys.modules[name] = module
    return module


class Anything:
    """Any attribute, any call: stands for the heavy libraries the references import."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return Anything()

    def __getattr__(self, name):
        return Anything()


def load_file_as_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def git_commit(path):
    try:
        return subprocess.check_output(["git", "-C", path, "rev-parse", "HEAD"], stderr=subprocess.DEVNULL).decode().strip()
    except Exception:
        return open(os.path.join(path, "COMMIT")).read().strip() if os.path.exists(os.path.join(path, "COMMIT")) else "unknown"


class SentencePieceAsHF:
    """The HF LlamaTokenizer calls the references make, on tok512.model. Special tokens written
    as text ("<s>", "</s>") are parsed as those tokens, as HF's tokenizers do."""

    def __init__(self, model_file):
        self.sp = spm.SentencePieceProcessor(model_file=model_file)
        self.bos_token_id = self.sp.bos_id()
        self.eos_token_id = self.sp.eos_id()
        self.bos_token = "<s>"
        self.eos_token = "</s>"
        self.chat_template = None
        self.model_max_length = int(1e30)

    def _encode_text(self, text):
        ids = []
        for i, part in enumerate(text.split("<s>")):
            if i > 0:
                ids.append(self.bos_token_id)
            if part:
                ids.extend(self.sp.encode(part))
        return ids

    def encode(self, text, add_special_tokens=True, return_tensors=None):
        ids = ([self.bos_token_id] if add_special_tokens else []) + self._encode_text(text)
        return FakeTensor([ids]) if return_tensors == "pt" else ids

    def decode(self, ids, skip_special_tokens=False):
        ids = [int(i) for i in ids]
        if skip_special_tokens:
            ids = [i for i in ids if i not in (self.bos_token_id, self.eos_token_id)]
        return self.sp.decode(ids)

    def batch_decode(self, batch, skip_special_tokens=False):
        return [self.decode(ids, skip_special_tokens) for ids in batch]

    def __call__(self, texts, padding=None, return_tensors=None, add_special_tokens=True):
        texts = [texts] if isinstance(texts, str) else texts
        ids = [self.encode(t, add_special_tokens) for t in texts]
        return FakeBatch(ids)


class FakeTensor(list):
    """input_ids as nested lists with the few tensor methods the references call."""

    @property
    def shape(self):
        return (len(self), len(self[0]))

    def to(self, device):
        return self

    def __getitem__(self, index):
        if isinstance(index, tuple):  # [:, :n]
            rows, cols = index
            return FakeTensor([row[cols] for row in list.__getitem__(self, rows)])
        return list.__getitem__(self, index)


class FakeBatch:
    def __init__(self, ids):
        self.input_ids = FakeTensor(ids)
        self.attention_mask = FakeTensor([[1] * len(r) for r in ids])

    def to(self, device):
        return self

    def keys(self):
        return ["input_ids", "attention_mask"]

    def __getitem__(self, key):
        return getattr(self, key)


def read_jsonl(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# --------------------------------------------------------------------------------------------
# Needle: KVCache-Factory's tester (prompt and context), HeadKV's score
# --------------------------------------------------------------------------------------------

def record_needle(args, tok_file, data_root):
    for name in ["tiktoken", "jieba", "anthropic", "openai", "tensor_parallel", "torch", "pyramidkv",
                 "pyramidkv.monkeypatch", "pyramidkv.eval_utils", "rouge_score"]:
        stub_module(name)
    sys.modules["transformers"] = stub_module("transformers", AutoModelForCausalLM=Anything, AutoTokenizer=Anything)
    sys.modules["pyramidkv.monkeypatch"].replace_llama = Anything()
    sys.modules["pyramidkv.monkeypatch"].replace_mistral = Anything()
    sys.modules["pyramidkv.eval_utils"].build_stop_token_ids = Anything()
    sys.modules["rouge_score"].rouge_scorer = types.SimpleNamespace(RougeScorer=Anything)
    checkout = args.kvcache_factory_needle or args.kvcache_factory
    ref = load_file_as_module("kvcf_needle", os.path.join(checkout, "run_needle_in_haystack.py"))
    cls = ref.LLMNeedleHaystackTester
    defaults = {k: v.default for k, v in inspect.signature(cls.__init__).parameters.items() if k != "self"}
    cells = []
    # Depths 0 and 100 do not depend on which ids count as a period (no walk back).
    for length, depth, buffer in [(400, 0, 150), (400, 100, 150), (512, 0, 200)]:
        tester = object.__new__(cls)
        tester.needle = defaults["needle"]
        tester.retrieval_question = defaults["retrieval_question"]
        tester.haystack_dir = os.path.join(data_root, "needle_haystack/PaulGrahamEssays")
        tester.context_lengths = [length]
        tester.final_context_length_buffer = buffer
        # A provider whose branches encode without and decode skipping special tokens, as the
        # HF models the scripts run (LLaMA3, Mistral); its hard-coded period ids do not matter at
        # depths 0 and 100 (no walk back).
        tester.model_provider = "Mistral"
        tester.enc = SentencePieceAsHF(tok_file)
        context = tester.generate_context(length, depth)
        cells.append({"context_length": length, "depth_percent": depth, "final_context_length_buffer": buffer,
                      "prompt": tester.generate_prompt(context)})
    # The generation call of evaluate_and_log (read from its source: max_new_tokens, stop ids,
    # and whether min_length/min_new_tokens appear).
    source = inspect.getsource(cls.evaluate_and_log)
    # The template around the context, for tests/tasks/golden_prompts_b/needle_kvcache_factory.txt.
    around = tester.generate_prompt("{context}")
    with open(os.path.join(REPO, "tests/tasks/golden_prompts_b/needle_kvcache_factory.txt"), "w", encoding="utf-8") as f:
        f.write(around)
    # The order glob() walks here: the file system's (7ee6be0 used it unsorted; 485af3c sorts it).
    glob_order = [os.path.basename(f) for f in glob.glob(os.path.join(tester.haystack_dir, "*.txt"))]
    return {"reference": "Zefan-Cai/KVCache-Factory run_needle_in_haystack.py @" + git_commit(checkout),
            "needle": defaults["needle"], "retrieval_question": defaults["retrieval_question"],
            "haystack_glob_order": glob_order,
            "generate_masks_stop_at_first_step": ("min_length" in source) or ("min_new_tokens" in source),
            "cells": cells}


def record_headkv_scores(args):
    captured = {}

    class FakeFrame:
        def __init__(self, data):
            captured["rows"] = data
            raise Stop()

    stub_module("pandas", DataFrame=FakeFrame, pivot_table=Anything())
    stub_module("seaborn")
    stub_module("matplotlib")
    stub_module("matplotlib.pyplot")
    stub_module("matplotlib.colors", LinearSegmentedColormap=Anything())
    ref = load_file_as_module("headkv_vis", os.path.join(args.headkv, "run_needle_visulize.py"))
    needle = "\nThe best thing to do in San Francisco is eat a sandwich and sit in Dolores Park on a sunny day.\n"
    responses = [
        "eat a sandwich and sit in Dolores Park on a sunny day.",
        "The best thing to do in San Francisco is eat a sandwich and sit in Dolores Park on a sunny day.",
        "Eat a sandwich and sit in Dolores Park on a sunny day",
        "eat a sandwich",
        "Go to the Golden Gate Bridge.",
        "",
        "EAT A SANDWICH, and sit in Dolores Park.",
    ]
    folder = tempfile.mkdtemp()
    for i, response in enumerate(responses):
        with open(os.path.join(folder, f"r{i:02d}.json"), "w") as f:
            json.dump({"depth_percent": float(i), "context_length": 100, "model_response": response, "needle": needle}, f)
    try:
        ref.main(folder + "/", "stories260K", folder)
    except Stop:
        pass
    shutil.rmtree(folder)
    by_depth = {row["Document Depth"]: row["Score"] for row in captured["rows"]}
    return {"reference": "FYYFU/HeadKV run_needle_visulize.py main() @" + git_commit(args.headkv),
            "cases": [{"response": r, "score": by_depth[float(i)]} for i, r in enumerate(responses)]}


# --------------------------------------------------------------------------------------------
# LongBench: KVCache-Factory run_longbench.py main(), kvpress dataset + pipeline preprocess
# --------------------------------------------------------------------------------------------

LONGBENCH_SUBSETS = ["narrativeqa", "qasper", "multifieldqa_en", "hotpotqa", "2wikimqa", "musique", "gov_report",
                     "qmsum", "multi_news", "trec", "triviaqa", "samsum", "passage_count", "passage_retrieval_en",
                     "lcc", "repobench-p"]


def longbench_file(data_root, subset):
    path = os.path.join(data_root, "longbench", subset + ".jsonl")
    return path if os.path.exists(path) else os.path.join(REPO, "tests/fixtures/longbench", subset + ".jsonl")


def record_kvcache_factory_longbench(args, tok_file, data_root):
    for name in ["numpy", "tqdm", "torch", "pyramidkv", "pyramidkv.quantization", "pyramidkv.monkeypatch",
                 "pyramidkv.eval_utils"]:
        sys.modules.pop(name, None)
    import numpy  # noqa: F401  (real)
    stub_module("tqdm", tqdm=lambda x, **k: x)
    stub_module("torch", cuda=types.SimpleNamespace(empty_cache=lambda: None))
    stub_module("transformers", AutoModelForCausalLM=Anything, AutoTokenizer=Anything)
    stub_module("pyramidkv")
    stub_module("pyramidkv.quantization", build_quantized_cache_config=lambda *a, **k: None, patch_quantized_cache=Anything())
    stub_module("pyramidkv.eval_utils", str2bool=Anything(), build_stop_token_ids=Anything())
    ref = load_file_as_module("kvcf_longbench", os.path.join(args.kvcache_factory, "run_longbench.py"))
    tokenizer = SentencePieceAsHF(tok_file)
    calls = []

    class FakeModel:
        model = types.SimpleNamespace(layers=[])

        def generate(self, input_ids=None, attention_mask=None, **kwargs):
            calls.append({"input_ids": list(input_ids[0]), **{k: v for k, v in kwargs.items() if k != "output_attentions"}})
            return FakeTensor([list(input_ids[0])])

    ref.tokenizer = tokenizer
    ref.model = FakeModel()
    out = {"reference": "Zefan-Cai/KVCache-Factory run_longbench.py main() @" + git_commit(args.kvcache_factory),
           "model2maxlen": ref.model2maxlen, "runs": []}
    # (model path as run_longbench.py matches it, model2maxlen override or None, subsets)
    runs = [("meta-llama/llama2-7b-chat-hf", None, ["hotpotqa", "trec", "samsum", "passage_count"]),
            ("meta-llama/Llama-2-7b-chat-hf", None, ["hotpotqa"]),
            ("stories260K-test", {"stories260k": 420}, ["hotpotqa", "trec", "passage_retrieval_en"])]
    save_dir = tempfile.mkdtemp()
    for model_path, table, subsets in runs:
        saved = dict(ref.model2maxlen)
        if table is not None:
            ref.model2maxlen.clear()
            ref.model2maxlen.update(table)
        for subset in subsets:
            calls.clear()
            a = argparse.Namespace(model_path=model_path, dataset=subset, data_file=longbench_file(data_root, subset),
                                   save_dir=save_dir, max_num_examples=2, sample_method="topk", eval_batch_size=1,
                                   max_capacity_prompts=128, max_capacity_prompts_ratio=-1, method="FullKV",
                                   output_attentions=False, quant_method=None, nbits=8, quant_backend="hqq",
                                   quant_device="cuda", quant_residual_length=None, q_group_size=64, axis_key=None,
                                   axis_value=None, merge=None, floor=0.2, head_path="", head_beta=1.01, recent_size=32,
                                   pruning_ratio=0.4, kv_cache_granularity="query_head", gqa_score_agg="mean")
            ref.main(a)
            for i, call in enumerate(calls):
                ids = call.pop("input_ids")
                out["runs"].append({"model_path": model_path, "model2maxlen": table or saved, "subset": subset,
                                    "example": i, "input_ids": ids, "prompt_text": tokenizer.decode(ids, True),
                                    "generate_kwargs": call, "context_length": len(ids)})
        ref.model2maxlen.clear()
        ref.model2maxlen.update(saved)
    shutil.rmtree(save_dir)
    return out


class FakeHFDataset:
    def __init__(self, rows):
        self.rows = rows

    def map(self, fn):
        return FakeHFDataset([{**row, **fn(row)} for row in self.rows])

    def to_pandas(self):
        return FakeFrame(self.rows)


class FakeFrame:
    def __init__(self, rows):
        self.rows = [dict(r) for r in rows]

    def rename(self, columns):
        return FakeFrame([{columns.get(k, k): v for k, v in row.items()} for row in self.rows])

    def __setitem__(self, key, value):
        for row in self.rows:
            row[key] = value

    def __getitem__(self, key):
        return [row[key] for row in self.rows]


def record_kvpress_longbench(args, tok_file, data_root):
    pushed = {}

    def load_dataset(name, config, split):
        subset = config[:-2] if config.endswith("_e") else config
        if config.endswith("_e") or subset not in LONGBENCH_SUBSETS:
            return FakeHFDataset([])
        return FakeHFDataset(read_jsonl(longbench_file(data_root, subset))[:2])

    class Dataset:
        def __init__(self, rows):
            self.rows = rows

        @staticmethod
        def from_pandas(frame):
            return Dataset(frame.rows)

        def push_to_hub(self, name, config_name, split):
            pushed[config_name] = self.rows

    stub_module("datasets", load_dataset=load_dataset, Dataset=Dataset)
    load_file_as_module("kvpress_longbench_data", os.path.join(
        args.kvpress, "evaluation/benchmarks/longbench/create_huggingface_dataset.py"))

    # kvpress/pipeline.py with its imports stubbed; preprocess() runs as written.
    class Pipeline:
        pass

    stub_module("torch")
    stub_module("transformers", AutoModelForCausalLM=Anything, Cache=object, DynamicCache=Anything, Pipeline=Pipeline,
                QuantizedCache=Anything)
    stub_module("transformers.pipelines", PIPELINE_REGISTRY=Anything())
    stub_module("transformers.pipelines.base", GenericTensor=object)
    stub_module("kvpress")
    stub_module("kvpress.presses")
    for press in ["base_press.BasePress", "decoding_press.DecodingPress", "dms_press.DMSPress", "finch_press.FinchPress",
                  "key_rerotation_press.KeyRerotationPress", "prefill_decoding_press.PrefillDecodingPress",
                  "restorekv_press.RestoreKVPress"]:
        module, cls = press.split(".")
        stub_module("kvpress.presses." + module, **{cls: type(cls, (), {})})
    pipeline = load_file_as_module("kvpress_pipeline", os.path.join(args.kvpress, "kvpress/pipeline.py"))
    tokenizer = SentencePieceAsHF(tok_file)
    seen = []

    class RecordingTokenizer(SentencePieceAsHF):
        def encode(self, text, add_special_tokens=True, return_tensors=None):
            seen.append(text)
            return super().encode(text, add_special_tokens, return_tensors)

    host = types.SimpleNamespace(tokenizer=RecordingTokenizer(tok_file))
    rows = []
    for subset in LONGBENCH_SUBSETS:
        for i, row in enumerate(pushed.get(subset, [])):
            seen.clear()
            max_context_length = 300
            tensors = pipeline.KVPressTextGenerationPipeline.preprocess(
                host, row["context"], [row["question"]], row["answer_prefix"], max_context_length)
            context_text = seen[0]  # the whole context (its ids are cut, not the text): recorded by hash
            rows.append({"subset": subset, "example": i, "max_context_length": max_context_length,
                         "context_text_sha256": hashlib.sha256(context_text.encode("utf-8")).hexdigest(),
                         "context_text_head": context_text[:300], "context_text_tail": context_text[-300:],
                         "question_text": seen[1],
                         "context_ids": list(tensors["context_ids"][0]),
                         "question_ids": list(tensors["questions_ids"][0][0]),
                         "max_new_tokens": int(row["max_new_tokens"])})
    del tokenizer
    return {"reference": "NVIDIA/kvpress create_huggingface_dataset.py + pipeline.py preprocess() @" + git_commit(args.kvpress),
            "rows": rows}


# --------------------------------------------------------------------------------------------
# Multi-document QA: lost-in-the-middle's Llama-2 chat prompt, BUZZ's prompt and EM
# --------------------------------------------------------------------------------------------

def record_multidoc(args, data_root):
    for name in ["torch", "tqdm", "vllm", "xopen", "transformers"]:
        stub_module(name, tqdm=Anything(), LLM=Anything, SamplingParams=Anything, xopen=open, AutoTokenizer=Anything)
    sys.path.insert(0, os.path.join(args.litm, "src"))
    sys.modules.pop("lost_in_the_middle", None)
    prompting = importlib.import_module("lost_in_the_middle.prompting")
    litm = load_file_as_module("litm_llama2", os.path.join(args.litm, "scripts/get_qa_responses_from_llama_2.py"))
    data = os.path.join(data_root, "multidoc_qa_litm/derived_from_ViktorTorp/nq-open-10_total_documents_gold_at_4.first441.DERIVED.jsonl.gz")
    example = read_jsonl(data)[0]
    documents = [prompting.Document.from_dict(ctx) for ctx in example["ctxs"]]
    chat = litm.format_chat_prompt(prompting.get_qa_prompt(example["question"], documents, mention_random_ordering=False,
                                                                query_aware_contextualization=False))

    stub_module("entry_function")
    stub_module("entry_function.eval_inside_forward")
    stub_module("entry_function.eval_inside_forward.config", modify_llama_forward=Anything())
    stub_module("entry_function.eval_inside_forward.config.config_eval_parameters", config_junqi_eval=Anything())
    stub_module("entry_function.eval_inside_forward.config.run_greedy_inference", my_inference_v3=Anything())
    stub_module("entry_function.deprecated")
    stub_module("entry_function.deprecated.llm_cached")
    stub_module("entry_function.deprecated.llm_cached.utils", load=Anything())
    stub_module("entry_function.eval_inside_forward.cache")
    stub_module("entry_function.eval_inside_forward.cache.cache_entity_collection")
    stub_module("entry_function.eval_inside_forward.cache.cache_coordinator", CacheCoordinator=Anything)
    buzz = load_file_as_module("buzz_qa", os.path.join(args.buzz, "entry_function/eval_inside_forward/run_ten_doc_qa_em.py"))
    with gzip.open(data, "rt", encoding="utf-8") as f:
        first = [next(f) for _ in range(2)]
    buzz_prompts = buzz.transform_to_prompt(first)
    em_cases = [(" Paris ", "paris"), ("paris.", "Paris"), ("The answer is Paris", "Paris"), ("PARIS\n", "Paris")]
    return {"reference": {"lost-in-the-middle": "nelson-liu/lost-in-the-middle @" + git_commit(args.litm),
                          "buzz": "JunqiZhao888/buzz-llm run_ten_doc_qa_em.py @" + git_commit(args.buzz)},
            "data": os.path.relpath(data, data_root),
            "litm_llama2_chat_prompt_first": chat,
            "buzz_prompts": [{"prompt": p["prompt"], "answer": p["answer"]} for p in buzz_prompts],
            "buzz_em": [{"predicted": p, "actual": a, "em": buzz.calc_em_score(p, a)} for p, a in em_cases]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kvcache-factory", required=True)
    parser.add_argument("--kvcache-factory-needle", help="a newer KVCache-Factory checkout for the needle tester "
                        "(default: --kvcache-factory); the recording is of c97f9d7, see golden_reference/README.md")
    parser.add_argument("--headkv", required=True)
    parser.add_argument("--kvpress", required=True)
    parser.add_argument("--litm", required=True)
    parser.add_argument("--buzz", required=True)
    parser.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    parser.add_argument("--out", default=os.path.join(REPO, "tests/tasks/golden_reference"))
    args = parser.parse_args()
    data_root = os.path.join(args.shared, "data")
    tok_file = os.path.join(args.shared, "models/stories260K/tok512.model")
    os.makedirs(args.out, exist_ok=True)
    outputs = {
        "needle_kvcache_factory.json": lambda: record_needle(args, tok_file, data_root),
        "needle_headkv_score.json": lambda: record_headkv_scores(args),
        "longbench_kvcache_factory.json": lambda: record_kvcache_factory_longbench(args, tok_file, data_root),
        "longbench_kvpress.json": lambda: record_kvpress_longbench(args, tok_file, data_root),
        "multidoc_qa.json": lambda: record_multidoc(args, data_root),
    }
    for name, make in outputs.items():
        saved = dict(sys.modules)
        value = make()
        sys.modules.clear()
        sys.modules.update(saved)
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            json.dump(value, f, ensure_ascii=False, indent=1)
            f.write("\n")
        print("wrote", os.path.join(args.out, name))


if __name__ == "__main__":
    main()
