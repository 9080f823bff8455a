#!/usr/bin/env bash
# kvbench against llama2.c's run.c on the same machine, same threads, interleaved runs (kvbench,
# run.c, kvbench, run.c, ...) so that load from other processes hits both; reports every run and
# the best of each (docs/performance.md). run.c is built outside the repository:
#   gcc -O3 -march=native -fopenmp -o RUN_DIR/run RUN_DIR/run.c -lm
# Usage: scripts/perf_vs_runc.sh RUN_DIR MODEL.bin TOKENIZER.bin(run.c) [threads=2] [repeats=3] [context=256] [decode=64]
# kvbench needs a sentencepiece tokenizer.model beside MODEL.bin (or MODEL.bin is stories260K's).
set -euo pipefail
RUN_DIR=$1 MODEL=$2 RUNC_TOK=$3 THREADS=${4:-2} REPEATS=${5:-3} CONTEXT=${6:-256} DECODE=${7:-64}
KVBENCH=${KVBENCH:-build/kvbench}
best() { sort -g | tail -1; }
field() { sed -n "s/.*\"$1\": \([0-9.e+]*\).*/\1/p"; }
# run.c runs the prompt one token at a time: its tok/s is both its prefill and its decode rate.
# The prompt is longer than the steps, so every step is a forward whatever the random weights emit.
prompt=$(python3 -c "print(' '.join(['once upon a time there was a little girl']*200))")
runc=() pre=() dec=() loads=()
for ((i = 0; i < REPEATS; i++)); do
  loads+=("$(cut -d' ' -f1 /proc/loadavg)")
  out=$("$KVBENCH" bench --model "$MODEL" --context "$CONTEXT" \
    --decode "$DECODE" --runs 1 --threads "$THREADS" --json)
  pre+=("$(echo "$out" | field prefill_tokens_per_s)")
  dec+=("$(echo "$out" | field decode_tokens_per_s)")
  loads+=("$(cut -d' ' -f1 /proc/loadavg)")
  runc+=("$(OMP_NUM_THREADS=$THREADS "$RUN_DIR/run" "$MODEL" -z "$RUNC_TOK" -t 0 -n $((CONTEXT + DECODE)) -i "$prompt" 2>&1 >/dev/null |
    sed -n 's/achieved tok\/s: //p')")
done
r=$(printf '%s\n' "${runc[@]}" | best) p=$(printf '%s\n' "${pre[@]}" | best) d=$(printf '%s\n' "${dec[@]}" | best)
echo "model $MODEL, $THREADS threads, $REPEATS interleaved runs (best of each), $(date -u '+%F %H:%M UTC')"
echo "1-min load average before each run: ${loads[*]}"
echo "run.c tok/s (every token a forward): $r   [${runc[*]}]"
echo "kvbench prefill tok/s ($CONTEXT tokens): $p   [${pre[*]}]"
echo "kvbench decode tok/s ($DECODE tokens after the prompt): $d   [${dec[*]}]"
awk -v r="$r" -v p="$p" -v d="$d" 'BEGIN {printf "prefill %.1fx run.c, decode %.2fx run.c\n", p / r, d / r}'
