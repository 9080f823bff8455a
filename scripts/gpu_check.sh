#!/usr/bin/env bash
# Everything a lent GPU session checks, in one call (device leases are short): the CUDA build, the
# CUDA tests (a decode loop under synchronisation-debug "error" among them), transformers'
# reference logits for the tiny Hugging Face cases (tests/fixtures/hf_reference), and kvbench
# against transformers on a Llama-3-8B-shaped random bf16 checkpoint (scripts/gpu_compare_hf.py).
# On the GPU machine, from the checkout, with .deps/ (scripts/cuda_build.sh --fetch) and a shared/
# holding models/stories260K and models/llama3-tokenizer carried along:
#   scripts/gpu_check.sh OUT_DIR [SECONDS [gpu_compare_hf.py options...]]
# SECONDS: the wall-clock budget of the call (default 540); further options go to gpu_compare_hf.py,
# e.g. `--policies snapkv,streaming_llm,h2o --contexts 32768` to spend a lease on what is unmeasured.
# On the CPU, before a lease: `scripts/gpu_check.sh --dry-run [gpu_compare_hf.py options]` runs every
# cell the lease's kvbench would (policy, protocol) on stories260K at a short context and a small
# budget, so that a policy that cannot run is found here, not on the GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == --dry-run ]]; then
  cells=()
  while IFS= read -r cell; do cells+=(--cell "${cell/\"budget\": 1024/\"budget\": 64}"); done \
    < <(python3 scripts/gpu_compare_hf.py --kvbench - --workdir - --tokenizer - --print-cells "${@:2}")
  exec "${KVBENCH:-build/kvbench}" bench --model stories260K --context 256 --decode 8 --warmup 0 --runs 1 --json "${cells[@]}"
fi
out="${1:?usage: scripts/gpu_check.sh OUT_DIR [SECONDS]}"
budget="${2:-540}"
mkdir -p "$out"
export KVBENCH_SHARED_DIR="${KVBENCH_SHARED_DIR:-$PWD/shared}" PYTHONUNBUFFERED=1
log() { echo "[$SECONDS s] $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'

# Neither needs the build: they run beside it (CPU for the references, GPU and disk for the checkpoint).
(python3 scripts/make_hf_reference.py /tmp/hf_reference "$KVBENCH_SHARED_DIR/models/stories260K/tok512.model" &&
   tar -C /tmp -cf "$out/hf_reference.tar" hf_reference) > "$out/hf_reference.log" 2>&1 &
python3 scripts/gpu_compare_hf.py --kvbench none --tokenizer none --workdir /tmp/llama3-8b-random \
  --checkpoint-only > "$out/checkpoint.log" 2>&1 &
checkpoint=$!

log "building kvbench and test_models"
kernels=()  # gpu_compare_hf.py's default: Full with auto, auto+graphs, split_k+graphs, split_k, chunked
if ! scripts/cuda_build.sh build-cuda kvbench test_models > "$out/build.log" 2>&1; then
  # The split-K kernel and the CUDA graphs are the newest CUDA code: without them the lease still
  # measures the rest.
  grep -E 'error|Error' "$out/build.log" | head -20
  log "build failed: again without the split-K kernel and CUDA graphs (build.log kept as build_split_k.log)"
  mv "$out/build.log" "$out/build_split_k.log"
  if ! KVBENCH_CMAKE_ARGS="-DKVBENCH_SPLIT_K=OFF -DKVBENCH_CUDA_GRAPHS=OFF" scripts/cuda_build.sh build-cuda kvbench test_models > "$out/build.log" 2>&1; then
    grep -E 'error|Error' "$out/build.log" | head -40; tail -20 "$out/build.log"; exit 1
  fi
  kernels=(--attention auto,chunked)
fi
log "CUDA tests"
build-cuda/test_models --gtest_filter='Cuda*' > "$out/cuda_tests.log" 2>&1
grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|error' "$out/cuda_tests.log" | head -30
wait "$checkpoint" || { tail -20 "$out/checkpoint.log"; exit 1; }
# Each kvbench process (two: Full, then the compressing policies) reads the 16 GB checkpoint: time one read.
log "reading the checkpoint once"; cat /tmp/llama3-8b-random/*.safetensors > /dev/null; log "read"
log "kvbench vs transformers"
python3 scripts/gpu_compare_hf.py --kvbench build-cuda/kvbench --workdir /tmp/llama3-8b-random \
  --tokenizer "$KVBENCH_SHARED_DIR/models/llama3-tokenizer" --out "$out/gpu_vs_hf.json" \
  --deadline $((budget - SECONDS - 45)) "${kernels[@]}" "${@:3}" 2> "$out/compare.log"
wait
log "done"; tail -3 "$out/hf_reference.log"
