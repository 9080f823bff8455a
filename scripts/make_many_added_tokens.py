#!/usr/bin/env python3
"""A tokenizer directory whose tokenizer.json is SOURCE's plus N generated added_tokens.

Measures how the JSON reader and the tokenizer loader scale with the size of one array of
objects (issue #31, H2: nlohmann's callback parser was quadratic in it):

    scripts/make_many_added_tokens.py ../shared/models/llama3-tokenizer/tokenizer.json 200000 /tmp/tok200k
    time build/kvbench tokenize --tokenizer /tmp/tok200k --text hi

The new tokens get ids after the highest existing one and contents "<|kvbench_extra_K|>".
"""
import json
import os
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: make_many_added_tokens.py SOURCE_TOKENIZER_JSON N OUT_DIR")
    source, n, out_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(source, encoding="utf-8") as f:
        tok = json.load(f)
    ids = [t["id"] for t in tok.get("added_tokens", [])] + list(tok["model"].get("vocab", {}).values())
    next_id = max(ids) + 1
    for k in range(n):
        tok["added_tokens"].append({"id": next_id + k, "content": "<|kvbench_extra_%d|>" % k, "single_word": False,
                                    "lstrip": False, "rstrip": False, "normalized": False, "special": True})
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=2)


if __name__ == "__main__":
    main()
