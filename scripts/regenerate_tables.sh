#!/usr/bin/env bash
# Regenerates every paper table of results/tables on stories260K: runs the jobs each spec needs
# (with the limits below), then writes the tables (md/csv/tex), the figures and the HTML report
# under results/regenerated/. One command. It starts from an empty results folder (a job id does
# not depend on the code, so results of an older build would otherwise be reused); --resume keeps
# the results already there and runs only the missing jobs.
#
#   scripts/regenerate_tables.sh [--out DIR] [--workers N] [--resume] [--tables-only] [--only SPEC_ID]...
#
# --tables-only: no jobs; re-writes tables, figures, report and summary from the results there.
#
# Limits (stories260K has a 512-token context and a 512-piece vocabulary; the point is that every
# cell is filled by the real pipeline, not the paper's values): each spec's job fields are in
# results/regeneration.json with their reason, which the report reads too. The
# whole run (948 distinct jobs, 43 specs) took 1023 s of wall time with 2 workers on this 2-core machine
# (2026-11-28; 805 jobs took 283–308 s on 2026-11-27 when it was idle). Set WORKERS=1 on a busy machine. Env: KVBENCH (default build/kvbench), NICE (default "nice -n 10").
set -euo pipefail
cd "$(dirname "$0")/.."

KVBENCH=${KVBENCH:-build/kvbench}
OUT=results/regenerated
WORKERS=${WORKERS:-2}
NICE=${NICE:-nice -n 10}
ONLY=()
RESUME=0
TABLES_ONLY=0
while (($#)); do
  case "$1" in
    --out) OUT=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --only) ONLY+=("$2"); shift 2 ;;
    --resume) RESUME=1; shift ;;
    --tables-only) TABLES_ONLY=1; RESUME=1; shift ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) echo "regenerate_tables: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$KVBENCH" ] || { echo "regenerate_tables: $KVBENCH not built (scripts/setup.sh)" >&2; exit 2; }
RUNS=$OUT/runs
if ((!RESUME)); then
  rm -rf "$RUNS" "$OUT/figures" "$OUT/report.html"
  for spec in results/tables/*.json; do rm -f "$OUT/$(basename "$spec" .json)".{md,csv,tex}; done
fi
mkdir -p "$RUNS" "$OUT/figures"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# One data root for every job: ../shared/data plus the fixtures in the official formats for what
# is not staged (LongBench passage_count, the lm-eval tasks, LongBench-v2, InfiniteBench, SCBench), as symbolic links under build/.
DATA=build/regen_data
if ((!RESUME)) || [ ! -d "$DATA" ]; then
  rm -rf "$DATA"
  mkdir -p "$DATA/longbench"
  for entry in ../shared/data/*; do
    [ "$(basename "$entry")" = longbench ] || ln -s "$(realpath "$entry")" "$DATA/"
  done
  for f in ../shared/data/longbench/*; do ln -s "$(realpath "$f")" "$DATA/longbench/"; done
  ln -s "$(realpath tests/fixtures/longbench/passage_count.jsonl)" "$DATA/longbench/"
  ln -s "$(realpath tests/fixtures/lm_eval)" "$DATA/lm_eval"
  mkdir -p "$DATA/longbench_v2"
  ln -s "$(realpath tests/fixtures/longbench_v2/data_fixture.json)" "$DATA/longbench_v2/data.json"
  ln -s "$(realpath tests/fixtures/infinitebench/data)" "$DATA/infinitebench"
  ln -s "$(realpath tests/fixtures/scbench)" "$DATA/scbench"
fi
COMMON="data_root=$DATA"

# Per-spec job fields (limits that fit the papers' tables to stories260K, each with its reason):
# results/regeneration.json, which table, figure and report all read, so the report looks up the
# same jobs as the tables.
SPEC_OVERRIDES=results/regeneration.json

failed=()
start=$(date +%s)
for spec in results/tables/*.json; do
  id=$(basename "$spec" .json)
  if ((${#ONLY[@]})) && [[ ! " ${ONLY[*]} " =~ " $id " ]]; then continue; fi
  sets=(--set "$COMMON" --spec-overrides "$SPEC_OVERRIDES")
  echo "== $id"
  "$KVBENCH" table "$spec" --grid-out "$TMP/$id.json" "${sets[@]}" || { failed+=("$id (grid)"); continue; }
  ((TABLES_ONLY)) && rm -f "$TMP/$id".json "$TMP/$id"-*.json
  for grid in "$TMP/$id".json "$TMP/$id"-*.json; do
    [ -f "$grid" ] || continue
    if ! $NICE "$KVBENCH" grid "$grid" --results "$RUNS" --workers "$WORKERS" --quiet; then failed+=("$id")
    fi
  done
  "$KVBENCH" table "$spec" --results "$RUNS" --format all --out "$OUT" "${sets[@]}" >/dev/null || failed+=("$id (table)")
  if python3 -c "import json,sys; sys.exit(0 if 'figure' in json.load(open('$spec')) else 1)"; then
    "$KVBENCH" figure "$spec" --results "$RUNS" --out "$OUT/figures" "${sets[@]}" >/dev/null || failed+=("$id (figure)")
  fi
done
"$KVBENCH" report --results "$RUNS" --out "$OUT/report.html" --set "$COMMON" --spec-overrides "$SPEC_OVERRIDES" >/dev/null ||
  failed+=("report")
python3 scripts/summarize_regenerated.py "$OUT" >/dev/null || failed+=("summary")
echo "regenerate_tables: $(( $(date +%s) - start )) s; tables, figures and report in $OUT"
if ((${#failed[@]})); then
  echo "regenerate_tables: failing: ${failed[*]}" >&2
  exit 1
fi
