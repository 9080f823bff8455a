#!/usr/bin/env bash
# One prefill per prompt across a grid (harness/prefill_sharing.hpp), measured: a one-shot grid of
# 15 policies x 4 budgets on LongBench qasper prompts truncated to ~1,000 tokens, 32 new tokens,
# on the 110M-shaped random llama2.c checkpoint; run with sharing, then with --no-prefill-sharing,
# on the same machine; every result file must be equal (timings and the process's memory peak
# aside). Prints both wall times, their ratio and each grid's prefill line (docs/performance.md).
# Usage: scripts/bench_prefill_sharing.sh [WORK_DIR=/tmp/kvbench_prefill_sharing] [limit=2]
set -euo pipefail
WORK=${1:-/tmp/kvbench_prefill_sharing} LIMIT=${2:-2}
KVBENCH=${KVBENCH:-build/kvbench}
MODEL_DIR=$WORK/random110M
mkdir -p "$MODEL_DIR"
[[ -f $MODEL_DIR/model.bin ]] || /usr/bin/python3 scripts/make_random_llama2c.py "$MODEL_DIR/model.bin"
[[ -f $MODEL_DIR/tokenizer.model ]] || cp ../shared/models/llama2-tokenizer/tokenizer.model "$MODEL_DIR/"
cat > "$WORK/grid.json" <<JSON
{
  "name": "prefill_sharing_bench",
  "fixed": {"model": "$MODEL_DIR/model.bin", "task": "longbench/qasper", "protocol": "oneshot", "limit": $LIMIT,
            "task_params": {"max_length": 1000, "max_new_tokens": 32}},
  "axes": {
    "policy": ["snapkv", "pyramidkv", "adakv", "h2o", "tova", "scissorhands", "kvec", "knorm", "expected_attention",
               "keydiff", "observed_attention", "lagkv", "kvpress:critical_snapkv", "kvpress:chunkkv", "random"],
    "budget": ["128", "256", "384", "512"]
  }
}
JSON
rm -rf "$WORK/shared" "$WORK/alone"
run() {  # name, extra flags
  local start end
  start=$(date +%s.%N)
  "$KVBENCH" grid "$WORK/grid.json" --results "$WORK/$1" --quiet "${@:2}" 2> "$WORK/$1.log"
  end=$(date +%s.%N)
  python3 -c "print(round($end - $start, 1))" > "$WORK/$1.seconds"
  echo "$1: $(cat "$WORK/$1.seconds") s  $(grep 'prefill tokens' "$WORK/$1.log")"
}
run shared
run alone --no-prefill-sharing
echo "ratio (shared / alone): $(python3 -c "print(round($(cat "$WORK/shared.seconds") / $(cat "$WORK/alone.seconds"), 3))")"
/usr/bin/python3 - "$WORK/shared" "$WORK/alone" <<'PY'
import glob, json, os, sys
a, b = sys.argv[1:]
names = sorted(os.path.basename(p) for p in glob.glob(a + "/*.json"))
assert names == sorted(os.path.basename(p) for p in glob.glob(b + "/*.json")), "different result files"
def comparable(path):
    r = json.load(open(path))
    for k in ("timings", "finished_at", "environment"): r.pop(k, None)
    r["memory"].pop("allocator_peak_bytes", None)
    return r
differ = [n for n in names if comparable(f"{a}/{n}") != comparable(f"{b}/{n}")]
print(f"{len(names)} results, {len(differ)} differ" + (": " + " ".join(differ) if differ else ""))
sys.exit(1 if differ else 0)
PY
