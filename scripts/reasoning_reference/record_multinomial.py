#!/usr/bin/env python3
"""Record torch.multinomial's draws as transformers' generate() makes them, for kvbench's sampler.

generate() with do_sample=True takes, each step, probs = softmax(scores) of the [1, vocab] row and
torch.multinomial(probs, num_samples=1) from the default CPU generator (seeded by
torch.manual_seed / transformers.set_seed). This records, for a few seeds, the tokens drawn over
steps from fixed float32 scores, so kvbench's Sampler can be checked to draw the same tokens with
the same seed (the same libtorch version: the draws are torch's, not transformers').

Usage: /usr/bin/python3 scripts/reasoning_reference/record_multinomial.py [--out FILE]
"""
import argparse
import json
import os

import torch


def scores_for(step, vocab=37):
    # Fixed, varied float32 scores per step (a smooth function: no RNG involved).
    return torch.tensor([((i * 7 + step * 3) % 11) * 0.37 - (i % 5) * 0.21 for i in range(vocab)], dtype=torch.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "fixtures", "reasoning", "multinomial_draws.json"))
    args = ap.parse_args()
    runs = []
    for seed in (0, 1, 42, 1234):
        torch.manual_seed(seed)
        drawn = []
        for step in range(24):
            probs = torch.softmax(scores_for(step)[None, :], dim=-1)
            drawn.append(int(torch.multinomial(probs, num_samples=1).item()))
        runs.append({"seed": seed, "tokens": drawn})
    steps = [[float(v) for v in scores_for(s).tolist()] for s in range(24)]
    out = {"torch_version": torch.__version__, "scores_per_step": steps, "runs": runs}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
