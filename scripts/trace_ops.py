#!/usr/bin/env python3
"""Sums a Chrome trace per operator and step: where a step goes. The trace comes from
`KVBENCH_TRACE=trace.json build/bench/bench_policies ...` (steps are "policy_step" events) or
`build/kvbench bench ... --trace trace.json` (steps are "decode_step" events). Times are inclusive (an operator that calls another
counts both) and the profiler roughly doubles the cost of small operators, so read the ranking,
not the absolute numbers; native loops that are not torch operators appear only in policy_step.

Usage: scripts/trace_ops.py trace.json [top]"""
import collections
import json
import sys


def called_by_steps(events, step):
    """Operators whose innermost enclosing event is a step: the dispatches a step pays for."""
    spans = sorted((e for e in events if e.get("ph") == "X"), key=lambda e: (e["ts"], -e["dur"]))
    open_spans, direct = [], 0
    for e in spans:
        while open_spans and open_spans[-1]["ts"] + open_spans[-1]["dur"] <= e["ts"]:
            open_spans.pop()
        if open_spans and open_spans[-1]["name"] == step:
            direct += 1
        open_spans.append(e)
    return direct


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        events = json.load(f)
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    total, count = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("ph") == "X":
            total[e["name"]] += e["dur"]
            count[e["name"]] += 1
    step = "policy_step" if count["policy_step"] else "decode_step"
    steps = count[step]
    if steps == 0:
        sys.exit(f"{sys.argv[1]}: no policy_step or decode_step event")
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    print(f"{steps} {step} events; {called_by_steps(events, step) / steps:.1f} operators called "
          f"directly by a step (not from inside another operator); per step:")
    for name, us in total.most_common(top):
        print(f"{us / steps:10.1f} us {count[name] / steps:6.1f}x  {name}")


if __name__ == "__main__":
    main()
