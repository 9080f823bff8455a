#!/usr/bin/env bash
# Sets up (idempotent), then runs the main job on the embedded default model (stories260K).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/kvbench demo "$@"
