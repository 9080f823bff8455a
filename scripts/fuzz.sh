#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/fuzz_*.cpp) with clang into build-fuzz/ and runs each for
# SECONDS (default 60) from its committed seed corpus fuzz/corpus/<target>/, with ASan, UBSan and
# leak detection. Prints executions and coverage per target and exits non-zero on any crash,
# hang (-timeout), out-of-memory (-rss_limit_mb) or leak; the input is kept under
# build-fuzz/artifacts/<target>/. Usage:
#   scripts/fuzz.sh [SECONDS] [TARGET...]        e.g. scripts/fuzz.sh 600 fuzz_json fuzz_jsonl
# Environment: FUZZ_PARALLEL (targets at once, default 1), FUZZ_TIMEOUT (seconds per input,
# default 10), FUZZ_RSS_MB (default 2048), FUZZ_BUILD_ONLY=1 (build, do not run), FUZZ_NO_BUILD=1
# (run the targets already built).
# Long runs on a shared machine: nice -n 15 scripts/fuzz.sh 600.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_PER_TARGET=${1:-60}
[ $# -gt 0 ] && shift
PARALLEL=${FUZZ_PARALLEL:-1}
BUILD=${KVBENCH_FUZZ_BUILD_DIR:-build-fuzz}
PREBUILT=${KVBENCH_BUILD_DIR:-build}

# clang and its libFuzzer runtime (Debian bookworm: clang 14).
PACKAGES=(clang libclang-rt-14-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "fuzz: installing ${missing[*]}"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null || exit 1
fi

targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi

if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
# Targets marked fuzz-prebuilt link the normal build's libraries (the task/policy registries).
if grep -q "^// fuzz-prebuilt" fuzz/fuzz_*.cpp; then
  [ -f "$PREBUILT/build.ninja" ] || cmake -S . -B "$PREBUILT" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
  libs=$(cmake --build "$PREBUILT" --target help | sed -n 's/^\(kvb_[a-z_0-9]*\): .*/\1/p' | grep -v sentencepiece | sort -u)
  # shellcheck disable=SC2086
  cmake --build "$PREBUILT" -j "${KVBENCH_JOBS:-2}" --target $libs kvb_sentencepiece || exit 1
fi

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DKVBENCH_FUZZ=ON -DKVBENCH_BUILD_TESTS=OFF -DKVBENCH_BUILD_BENCH=OFF \
  -DKVBENCH_FUZZ_PREBUILT_DIR="$ROOT/$PREBUILT" >/dev/null || exit 1
cmake --build "$BUILD" -j "${KVBENCH_JOBS:-2}" --target "${targets[@]}" || exit 1
fi
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_target() {
  local t=$1 corpus="$BUILD/corpus/$1" artifacts="$BUILD/artifacts/$1/" log="$BUILD/logs/$1.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  local seeds="fuzz/corpus/$t"
  [ -d "$seeds" ] || seeds=""
  # The working corpus (grown inputs) stays in build-fuzz; the seeds are read, never written.
  local t0; t0=$(date +%s)
  "$BUILD/fuzz/$t" -max_total_time="$SECONDS_PER_TARGET" -timeout="${FUZZ_TIMEOUT:-10}" \
    -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$artifacts" \
    "$corpus" $seeds >"$log" 2>&1
  echo $? >"$log.rc"
  echo $(($(date +%s) - t0)) >"$log.secs"
}

start=$(date +%s)
running=0
for t in "${targets[@]}"; do
  if [ ! -x "$BUILD/fuzz/$t" ]; then echo "fuzz: no target $t" >&2; exit 1; fi
  echo "fuzz: $t for ${SECONDS_PER_TARGET}s"
  run_target "$t" &
  running=$((running + 1))
  if ((running >= PARALLEL)); then wait -n; running=$((running - 1)); fi
done
wait

failed=0
printf '\n%-22s %8s %12s %8s %8s %8s  %s\n' target seconds executions cov ft crashes result
for t in "${targets[@]}"; do
  log="$BUILD/logs/$t.log"
  rc=$(cat "$log.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(cat "$log.secs" 2>/dev/null)
  line=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED).*cov: ' "$log" | tail -1)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$line")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$line")
  crashes=$(find "$BUILD/artifacts/$t" -type f | wc -l)
  result=ok
  if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then
    result="FAILED (exit $rc; $(grep -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)[^*]*|runtime error:.*' "$log" | head -c 120))"
    failed=1
  fi
  printf '%-22s %8s %12s %8s %8s %8s  %s\n' "$t" "${secs:-?}" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$crashes" "$result"
done
echo "fuzz: $((($(date +%s) - start))) s wall; logs in $BUILD/logs/, crashing inputs in $BUILD/artifacts/"
exit $failed
