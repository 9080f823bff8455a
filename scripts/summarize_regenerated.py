#!/usr/bin/env python3
"""Summarises results/regenerated/<id>.md (written by `kvbench table`) into SUMMARY.md: per table,
the filled cells, the missing ones and Kendall's tau-b between our ordering and the paper's.

Usage: scripts/summarize_regenerated.py [results/regenerated]"""
import glob
import json
import os
import re
import sys

out_dir = sys.argv[1] if len(sys.argv) > 1 else "results/regenerated"


def verdict(taus):
    """The plain statement: in how many columns our order of the methods is the paper's."""
    values = [float(v) for v in re.findall(r" (-?\d+\.\d+) \(\d+ rows\)", taus)]
    if not values:
        return "no paper numbers" if taus.startswith("no paper") else "fewer than 3 methods with both numbers"
    same = sum(v == 1.0 for v in values)
    agree = sum(v > 0 for v in values)
    against = sum(v < 0 for v in values)
    mean = sum(values) / len(values)
    return (f"{agree} of {len(values)} columns agree (τ > 0; {same} exactly), {against} disagree (τ < 0); "
            f"mean τ {mean:+.2f}")
rows = []
for spec in sorted(glob.glob("results/tables/*.json")):
    sid = os.path.basename(spec)[:-5]
    title = json.load(open(spec, encoding="utf-8"))["title"]
    md = os.path.join(out_dir, sid + ".md")
    if not os.path.exists(md):
        rows.append((sid, title, "not regenerated", "—", "—"))
        continue
    text = open(md, encoding="utf-8").read()
    missing = re.search(r"Missing: (\d+) of (\d+) cells", text)
    cells = "all filled" if not missing else f"{int(missing.group(2)) - int(missing.group(1))} of {missing.group(2)} filled"
    # A cell whose results differ in their configuration is averaged across them and marked ‡.
    mixed = text.count("\n- ‡ ")
    if mixed:
        cells += f", {mixed} mixing configurations (‡)"
    tau = re.search(r"Kendall's tau-b[^:]*: (.*?)\.\n", text)
    taus = tau.group(1) if tau else "no paper numbers to rank against" if "gives no numbers" in text else "fewer than 3 rows with both numbers"
    rows.append((sid, title, cells, taus, verdict(taus)))

with open(os.path.join(out_dir, "SUMMARY.md"), "w", encoding="utf-8") as f:
    f.write("# Regenerated tables: cells and rank agreement with the papers\n\n")
    f.write("Written by scripts/summarize_regenerated.py from the tables of scripts/regenerate_tables.sh. "
            "Kendall's tau-b per column over the rows (methods) with both numbers: 1 = the paper's order, "
            "-1 = reversed, about 0 = unrelated.\n\n")
    f.write("| spec | table | cells | orderings vs the paper | Kendall tau-b per column (rows) |\n|---|---|---|---|---|\n")
    for sid, title, cells, taus, plain in rows:
        f.write(f"| `{sid}` | {title} | {cells} | {plain} | {taus} |\n")
print(os.path.join(out_dir, "SUMMARY.md"))
