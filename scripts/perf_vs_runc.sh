#!/usr/bin/env bash
# kvbench against llama2.c's run.c on the same machine, same threads, interleaved runs, medians
# (docs/performance.md). run.c is fetched and built outside the repository:
#   git clone https://github.com/karpathy/llama2.c /tmp/llama2.c
#   gcc -O3 -march=native -fopenmp -o /tmp/llama2.c/run /tmp/llama2.c/run.c -lm
# and the 110M-shaped random checkpoint written with scripts/make_random_llama2c.py.
# Usage: scripts/perf_vs_runc.sh RUN_DIR MODEL.bin TOKENIZER.bin(run.c) [threads=2] [repeats=5] [context=256] [decode=64]
# The model directory must hold MODEL.bin and a sentencepiece tokenizer.model for kvbench.
set -euo pipefail
RUN_DIR=$1 MODEL=$2 RUNC_TOK=$3 THREADS=${4:-2} REPEATS=${5:-5} CONTEXT=${6:-256} DECODE=${7:-64}
KVBENCH=${KVBENCH:-build/kvbench}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
prompt=$(python3 -c "print(' '.join(['once upon a time there was a little girl']*200))")
runc=() pre=() dec=()
for ((i = 0; i < REPEATS; i++)); do
  # run.c processes the prompt one token at a time, so its tok/s is its prefill and decode rate.
  runc+=("$(OMP_NUM_THREADS=$THREADS "$RUN_DIR/run" "$MODEL" -z "$RUNC_TOK" -t 0 -n $((CONTEXT + DECODE)) -i "$prompt" 2>&1 >/dev/null |
    sed -n 's/achieved tok\/s: //p')")
  out=$(OMP_NUM_THREADS=$THREADS "$KVBENCH" bench --model "$MODEL" --context "$CONTEXT" --decode "$DECODE" --runs 1 \
    --threads "$THREADS" --json)
  pre+=("$(echo "$out" | sed -n 's/.*"prefill_tokens_per_s": \([0-9.e+]*\).*/\1/p')")
  dec+=("$(echo "$out" | sed -n 's/.*"decode_tokens_per_s": \([0-9.e+]*\).*/\1/p')")
done
r=$(printf '%s\n' "${runc[@]}" | median) p=$(printf '%s\n' "${pre[@]}" | median) d=$(printf '%s\n' "${dec[@]}" | median)
echo "model $MODEL, $THREADS threads, $REPEATS interleaved runs (medians), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "run.c tok/s (prompt and generation, one token at a time): $r   [${runc[*]}]"
echo "kvbench prefill tok/s ($CONTEXT tokens): $p   [${pre[*]}]"
echo "kvbench decode tok/s ($DECODE tokens): $d   [${dec[*]}]"
awk -v r="$r" -v p="$p" -v d="$d" 'BEGIN {printf "prefill %.1fx run.c, decode %.2fx run.c\n", p / r, d / r}'
