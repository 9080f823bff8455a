#!/bin/bash
# Records golden outputs of NVIDIA RULER's official data preparation (scripts/data/prepare.py) into
# tests/fixtures/ruler/, by running the unmodified RULER scripts. No RULER code lives in this repo:
# the scripts are taken from a checkout outside it (RULER_DIR, default /tmp/ruler_ref).
#
# One-time set-up (Debian 12 "bookworm", as root):
#   mkdir -p /tmp/ruler_ref && git -C /work/.mirror/NVIDIA+RULER/repo archive HEAD | tar -x -C /tmp/ruler_ref
#       # RULER commit c3f5e3b4f87f97e048793bb510a3a6b19a46bf3a (fetch github:NVIDIA/RULER for the mirror)
#   apt-get update && apt-get install -y python3-numpy python3-yaml python3-nltk python3-tqdm \
#       python3-sentencepiece python3-scipy python3-tenacity nodejs npm
#   npm install --prefix /tmp/tokref @anush008/tokenizers-linux-x64-gnu@0.6.0
#   data: data/ruler/{PaulGrahamEssays.json,wonderwords/*.txt} staged in this repo (see
#   data/ruler/PROVENANCE.md); data/ruler/squad.json and hotpotqa.json if present, otherwise
#   tests/fixtures/ruler/{squad,hotpotqa}_fixture.json (outputs then named qa_1_fixture / qa_2_fixture);
#   an NLTK data folder with tokenizers/punkt/PY3/english.pickle (NLTK_DATA, default /tmp/nltk_data).
#
# A full run takes ~25 min with JOBS=2: 16 of the runs never terminate inside RULER (see
# tests/fixtures/ruler/README.md) and are stopped after TIMEOUT seconds each, leaving no file.
#
# Usage: scripts/ruler_reference/record.sh [REGEX]
#   Runs every recording (or those whose "<tokenizer>/<folder>/<name>" matches REGEX), JOBS at a time,
#   each under a TIMEOUT (seconds). Writes tests/fixtures/ruler/<tokenizer>/<folder>/<name>.jsonl and a
#   run summary tests/fixtures/ruler/runs.tsv (rows of this invocation replace earlier ones).
#   Logs (prepare.py output and the task scripts' stderr) go to $WORK/logs.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
RULER_DIR=${RULER_DIR:-/tmp/ruler_ref}
SHARED=${SHARED:-$(cd "$REPO/../shared" 2>/dev/null && pwd || echo /work/shared)}
OUT=${OUT:-$REPO/tests/fixtures/ruler}
WORK=${WORK:-/tmp/ruler_record}
JOBS=${JOBS:-2}
TIMEOUT=${TIMEOUT:-120}
DATA=$REPO/data/ruler
export NLTK_DATA=${NLTK_DATA:-/tmp/nltk_data}
export NODE_PATH=${NODE_PATH:-/tmp/tokref/node_modules}
export PYTHONPATH=$HERE/stubs
export PYTHONHASHSEED=0   # not needed by RULER (it never iterates a set of str unsorted), kept for safety
export LC_ALL=C.UTF-8

# RULER's prepare.py starts the task scripts as `python <script>` through a shell: make `python` Debian's
# /usr/bin/python3 (through python_wrapper.sh, which also keeps a copy of the scripts' stderr).
mkdir -p "$WORK/bin" "$WORK/logs" "$OUT"
ln -sf "$HERE/python_wrapper.sh" "$WORK/bin/python"
export PATH=$WORK/bin:$PATH

# RULER reads its data from scripts/data/synthetic/json/.
J=$RULER_DIR/scripts/data/synthetic/json
ln -sf "$DATA/PaulGrahamEssays.json" "$J/PaulGrahamEssays.json"
if [ -f "$DATA/squad.json" ]; then
  ln -sf "$DATA/squad.json" "$J/squad.json"; QA1_NAME=qa_1
else   # SQuAD v2.0 dev is not staged (data/ruler/PROVENANCE.md): use the fixture subset
  ln -sf "$OUT/squad_fixture.json" "$J/squad.json"; QA1_NAME=qa_1_fixture
fi
if [ -f "$DATA/hotpotqa.json" ]; then
  ln -sf "$DATA/hotpotqa.json" "$J/hotpotqa.json"; QA2_NAME=qa_2
else
  ln -sf "$OUT/hotpotqa_fixture.json" "$J/hotpotqa.json"; QA2_NAME=qa_2_fixture
fi
# english_words.json is a Git LFS object (8.5 MB) that the RULER snapshot does not carry (the file is
# the LFS pointer, which json.load rejects). cwe reads it at start-up but only samples from it when it
# needs more distinct words than wonderwords has (8.7k), which none of these runs does; an empty object
# keeps such a run from silently differing (random.sample would raise instead).
if ! /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$J/english_words.json" 2>/dev/null; then
  [ -f "$J/english_words.json.lfs-pointer" ] || cp "$J/english_words.json" "$J/english_words.json.lfs-pointer"
  echo '{}' > "$J/english_words.json"
fi

TASKS="niah_single_1 niah_single_2 niah_single_3 niah_multikey_1 niah_multikey_2 niah_multikey_3 niah_multivalue niah_multiquery vt cwe fwe qa_1 qa_2"

# One job per line: tokenizer folder name task num_samples template max_seq_length tokenizer_type tokenizer_path [extra prepare.py args]
jobs() {
  local L3=$SHARED/models/llama3-tokenizer Q3=$SHARED/models/qwen3-tokenizer S=$SHARED/models/stories260K/tok512.model
  for len in 1024 4096; do
    for t in $TASKS; do
      n=$t; [ $t = qa_1 ] && n=$QA1_NAME; [ $t = qa_2 ] && n=$QA2_NAME
      echo "llama3 $len $n $t 3 base $len hf $L3"
      echo "qwen3 $len $n $t 3 base $len hf $Q3"
    done
  done
  # stories260K (512-piece vocabulary): only fwe fits its 512 tokens; the others at the shortest length
  # RULER generates them at (vt at none: its in-context example never fits 500 tokens), one sample.
  echo "stories260K 512 fwe fwe 3 base 512 nemo $S"
  while read -r t len; do
    n=$t; [ $t = qa_1 ] && n=$QA1_NAME; [ $t = qa_2 ] && n=$QA2_NAME
    echo "stories260K $len $n $t 1 base $len nemo $S"
  done <<'LIST'
fwe 511
niah_single_1 1024
niah_multikey_2 1024
niah_multikey_3 1024
cwe 2048
niah_single_2 4096
niah_single_3 4096
niah_multikey_1 4096
niah_multivalue 4096
niah_multiquery 4096
qa_1 4096
qa_2 8192
LIST
  # The QA haystacks' floor (10 documents) does not fit 1024 tokens: their second length is 8192.
  for t in qa_1 qa_2; do
    n=$t; [ $t = qa_1 ] && n=$QA1_NAME; [ $t = qa_2 ] && n=$QA2_NAME
    echo "llama3 8192 $n $t 2 base 8192 hf $L3"
    echo "qwen3 8192 $n $t 2 base 8192 hf $Q3"
  done
  echo "llama3 4096_seed7 niah_single_2 niah_single_2 2 base 4096 hf $L3 --random_seed 7"
  echo "llama3 4096_seed7 $QA1_NAME qa_1 2 base 4096 hf $L3 --random_seed 7"
  echo "llama3 1024_meta-llama3 niah_multikey_1 niah_multikey_1 2 meta-llama3 1024 hf $L3"
}

run_one() {
  local tok=$1 folder=$2 name=$3 task=$4 n=$5 tmpl=$6 len=$7 ttype=$8 tpath=$9; shift 9
  local id=$tok.$folder.$name save=$WORK/save/$tok/$folder/$name
  rm -rf "$save"; mkdir -p "$save" "$OUT/$tok/$folder"
  rm -f "$WORK/logs/$id.child.log"
  local t0=$(date +%s.%N)
  (cd "$RULER_DIR/scripts/data" && RULER_CHILD_LOG=$WORK/logs/$id.child.log timeout -k 10 "$TIMEOUT" \
     python prepare.py --save_dir "$save" --benchmark synthetic --task "$task" --tokenizer_path "$tpath" \
       --tokenizer_type "$ttype" --max_seq_length "$len" --model_template_type "$tmpl" --num_samples "$n" "$@") \
     > "$WORK/logs/$id.prepare.log" 2>&1
  local rc=$? secs=$(echo "$(date +%s.%N) - $t0" | bc)
  local f=$save/$task/validation.jsonl status
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then status=timeout
  elif [ -f "$f" ] && [ "$(wc -l < "$f")" -eq "$n" ]; then status=ok; cp "$f" "$OUT/$tok/$folder/$name.jsonl"
  else status=failed; fi
  [ $status = ok ] || rm -f "$OUT/$tok/$folder/$name.jsonl"
  printf '%s\t%s\t%s\t%s\t%s\t%.1f\t%s\n' "$tok" "$folder" "$name" "$status" "$n" "$secs" "$*" >> "$WORK/runs.part"
  echo "$id: $status ($(printf %.1f "$secs") s)"
}
export -f run_one
export OUT WORK RULER_DIR TIMEOUT

touch "$WORK/runs.part"   # rows of an interrupted earlier invocation are merged too
jobs | awk -v re="${1:-.}" '{ if (($1 "/" $2 "/" $3) ~ re) print }' \
  | xargs -r -P "$JOBS" -L1 bash -c 'run_one "$@"' _

# Merge this invocation's rows into runs.tsv (tokenizer, folder, name, status, samples, seconds, extra args).
{
  echo -e "tokenizer\tfolder\tname\tstatus\tnum_samples\tseconds\textra_args"
  { [ -f "$OUT/runs.tsv" ] && tail -n +2 "$OUT/runs.tsv"; cat "$WORK/runs.part"; } \
    | awk -F'\t' '{ k = $1 FS $2 FS $3; if (!(k in row)) order[++n] = k; row[k] = $0 } END { for (i = 1; i <= n; i++) print row[order[i]] }' \
    | sort -t$'\t' -k1,1 -k2,2 -k3,3
} > "$WORK/runs.tsv" && mv "$WORK/runs.tsv" "$OUT/runs.tsv" && rm -f "$WORK/runs.part"
