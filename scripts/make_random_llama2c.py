#!/usr/bin/python3
"""Writes a llama2.c legacy (version 0) float32 checkpoint with random weights, for speed
comparisons against llama2.c's run.c (docs/performance.md). Default shape: stories110M
(dim 768, hidden 2048, 12 layers, 12 heads, vocab 32000, seq_len 1024, shared classifier).

  /usr/bin/python3 scripts/make_random_llama2c.py  (Debian python3-numpy) /tmp/perf/random110M/model.bin

The file is ~420 MB: write it outside the repository. Put the Llama-2 tokenizer.model beside it
(kvbench) or pass llama2.c's tokenizer.bin to run.c with -z.
"""
import argparse
import struct

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--hidden-dim", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--kv-heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--seq-len", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    head = a.dim // a.heads
    kv_dim = head * a.kv_heads
    L = a.layers

    def normal(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)

    with open(a.out, "wb") as f:
        # A positive vocab_size means the classifier shares the embedding (llama2.c's convention).
        f.write(struct.pack("7i", a.dim, a.hidden_dim, L, a.heads, a.kv_heads, a.vocab, a.seq_len))
        f.write(normal(a.vocab, a.dim).tobytes())
        f.write(np.ones((L, a.dim), np.float32).tobytes())  # rms_att
        for shape in [(a.dim, a.dim), (kv_dim, a.dim), (kv_dim, a.dim), (a.dim, a.dim)]:  # wq wk wv wo
            for _ in range(L):
                f.write(normal(*shape).tobytes())
        f.write(np.ones((L, a.dim), np.float32).tobytes())  # rms_ffn
        for shape in [(a.hidden_dim, a.dim), (a.dim, a.hidden_dim), (a.hidden_dim, a.dim)]:  # w1 w2 w3
            for _ in range(L):
                f.write(normal(*shape).tobytes())
        f.write(np.ones(a.dim, np.float32).tobytes())  # rms_final
        f.write(np.zeros((2, a.seq_len, head // 2), np.float32).tobytes())  # legacy freq_cis (unused)


if __name__ == "__main__":
    main()
