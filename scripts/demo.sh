#!/usr/bin/env bash
# Sets up (idempotent) and builds the kvbench binary alone, then runs the main job on the embedded default model (stories260K).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh kvbench
exec build/kvbench demo "$@"
