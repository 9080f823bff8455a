"""Minimal stand-in for `transformers` (see ../README.md): AutoTokenizer.from_pretrained(path)
returns a tokenizer whose tokenize(text) equals PreTrainedTokenizerFast.tokenize(text), computed by
Hugging Face tokenizers (Rust) through its Node binding in a persistent subprocess."""
import json
import os
import subprocess

_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tok_server.js")


class _NodeHFTokenizer:
    def __init__(self, tokenizer_json):
        self._proc = subprocess.Popen(
            ["node", _SERVER, tokenizer_json],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1,
        )

    def tokenize(self, text):
        self._proc.stdin.write(json.dumps({"text": text}) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("tokenizer server died")
        return json.loads(line)["tokens"]

    def convert_tokens_to_string(self, tokens):
        raise NotImplementedError("not needed by RULER's data preparation")


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path, trust_remote_code=False, **kwargs):
        p = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
        return _NodeHFTokenizer(p)
