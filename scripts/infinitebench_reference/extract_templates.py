"""Writes data/infinitebench/templates.json: InfiniteBench's prompt templates (src/prompt.py), its
per-task max new tokens and truncation lengths (src/eval_utils.py DATA_NAME_TO_MAX_NEW_TOKENS, the
eval_*.py TRUNCATE_LEN), and kvpress's InfiniteBench split (evaluation/benchmarks/infinite_bench/
create_huggingface_dataset.py: context_prefix, question_template, answer_prefix), read by importing
the official modules from the mirrors (extracted at run time; nothing is retyped).

    /usr/bin/python3 scripts/infinitebench_reference/extract_templates.py
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ib_common as ib  # noqa: E402


def main():
    out_path = os.path.join(ib.REPO_ROOT, "data", "infinitebench", "templates.json")
    with tempfile.TemporaryDirectory() as tmp:
        ib.extract(ib.IB_MIRROR, ib.IB_COMMIT, tmp, ["src"])
        sys.path.insert(0, os.path.join(tmp, "src"))
        import prompt  # noqa: E402
        import record_prompts  # noqa: E402  (its stubs of what eval_utils imports)
        record_prompts.install_stubs()
        import eval_utils  # noqa: E402
        kv_dir = os.path.join(tmp, "kvpress")
        ib.extract(ib.KVPRESS_MIRROR, ib.KVPRESS_COMMIT, kv_dir, ["evaluation/benchmarks/infinite_bench"])
        ib.stub_module("datasets", Dataset=object, Features=lambda *a, **k: None, Sequence=lambda *a, **k: None,
                       Value=lambda *a, **k: None, load_dataset=None)
        path = os.path.join(kv_dir, "evaluation", "benchmarks", "infinite_bench", "create_huggingface_dataset.py")
        src = open(path, encoding="utf-8").read()
        kv = {}
        # The module's definitions only: it downloads and pushes every task below them at import.
        exec(compile(src[:src.index("\nfor task in [")], path, "exec"), kv)
        families = {"gpt4": prompt.gpt4_templates, "claude2": prompt.claude2_templates, "kimi": prompt.kimi_templates,
                    "yarn-mistral": prompt.yarn_mistral_templates}
        data = {
            "source": {"infinitebench": "OpenBMB/InfiniteBench @ " + ib.IB_COMMIT + " src/prompt.py, src/eval_utils.py",
                       "kvpress": "NVIDIA/kvpress @ " + ib.resolve(ib.KVPRESS_MIRROR, ib.KVPRESS_COMMIT)
                                  + " evaluation/benchmarks/infinite_bench/create_huggingface_dataset.py",
                       "written_by": "scripts/infinitebench_reference/extract_templates.py"},
            "tasks": ib.TASKS,
            "max_new_tokens": {t: eval_utils.DATA_NAME_TO_MAX_NEW_TOKENS[t] for t in ib.TASKS},
            # args.py model names -> prompt.py's template family (eval_utils.MODEL_TO_PROMPT_TEMPLATE).
            "families": {m: next(f for f, t in families.items() if t is tmpl)
                         for m, tmpl in eval_utils.MODEL_TO_PROMPT_TEMPLATE.items()},
            "templates": families,
            "kvpress": {"context_prefix": kv["context_prefix"], "question_template": kv["question_template"],
                        "answer_prefix": kv["answer_prefix"]},
        }
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", out_path)


if __name__ == "__main__":
    main()
