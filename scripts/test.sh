#!/usr/bin/env bash
# Sets up (idempotent), builds and runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd "${KVBENCH_BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)" "$@"
