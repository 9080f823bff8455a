#!/usr/bin/env bash
# Installs kvbench's dependencies from Debian bookworm and builds Release into build/: the targets
# named as arguments (scripts/demo.sh builds only `kvbench`), or everything.
# Idempotent: packages already present are not fetched again; the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake g++ ninja-build pkg-config ccache
  libtorch-dev libopenblas0-pthread
  libsentencepiece-dev libprotobuf-dev
  nlohmann-json3-dev libcli11-dev zlib1g-dev libutf8proc-dev libonig-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  wordnet-base gnuplot-nox
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# A single-node Slurm for the Slurm backend's test (tests/harness/slurm_test.cpp); optional:
# without it that test is skipped, so a failed install does not stop the set-up.
SLURM_PACKAGES=(slurmctld slurmd slurm-client)
missing=()
for p in "${SLURM_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]} (for the Slurm test)"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null; } || echo "setup: could not install ${missing[*]}; the Slurm test will be skipped"
fi

BUILD_DIR="${KVBENCH_BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j "${KVBENCH_JOBS:-$(nproc)}" "${targets[@]}"
