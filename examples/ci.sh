#!/usr/bin/env bash
# What a CI job runs to gate on dbsock's numbers (the workflow beside this
# file calls it; an integration test runs it too):
#   1. measure, writing JSON (to compare and keep), an HTML page (the
#      artifact people open) and Markdown (for a job summary);
#   2. check thresholds: the Unix speedup's whole 95% interval above 1, no
#      errors;
#   3. compare with a saved baseline, failing on a significant regression.
# Settings (environment): DBSOCK (the command, default: go run ./cmd/dbsock),
# OUT (directory, default ci-out), N (lookups per transport and round,
# default 10000), BASELINE (default baseline.json; skipped when missing),
# TARGETS (default "redis echo").
set -euo pipefail
DBSOCK="${DBSOCK:-go run ./cmd/dbsock}"
OUT="${OUT:-ci-out}"
N="${N:-10000}"
BASELINE="${BASELINE:-baseline.json}"
read -r -a targets <<< "${TARGETS:-redis echo}"
mkdir -p "$OUT"

thresholds=()
for t in "${targets[@]}"; do
  thresholds+=(--threshold "$t.unix_speedup_p50.lo>=1.0" --threshold "$t.unix.errors==0" --threshold "$t.tcp.errors==0")
done
$DBSOCK run "${targets[@]}" --provider local --n "$N" -q \
  --out "$OUT/results.json" --out "$OUT/report.html" --out "$OUT/report.md" "${thresholds[@]}"

if [ -f "$BASELINE" ]; then
  $DBSOCK compare "$BASELINE" "$OUT/results.json" --fail-on-regression 50% > "$OUT/compare.md"
  echo "ci: no regression beyond 50% against $BASELINE"
else
  echo "ci: no baseline at $BASELINE; keep $OUT/results.json as one"
fi
