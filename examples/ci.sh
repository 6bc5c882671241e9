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
# TARGETS (default "redis echo"), EXTRA (more flags for dbsock run, e.g.
# another --threshold), BOUND (the regression that fails the job, default
# 50%).
# Exit status: dbsock run's when it failed (1); else 3 when a threshold was
# violated (the comparison still ran), else compare's (4: a regression).
set -euo pipefail
DBSOCK="${DBSOCK:-go run ./cmd/dbsock}"
OUT="${OUT:-ci-out}"
N="${N:-10000}"
BASELINE="${BASELINE:-baseline.json}"
BOUND="${BOUND:-50%}"
read -r -a targets <<< "${TARGETS:-redis echo}"
read -r -a extra <<< "${EXTRA:-}"
mkdir -p "$OUT"

thresholds=()
for t in "${targets[@]}"; do
  thresholds+=(--threshold "$t.unix_speedup_p50.lo>=1.0" --threshold "$t.unix.errors==0" --threshold "$t.tcp.errors==0")
done
# Exit 3 is a violated threshold on a finished run: its report is written,
# so the comparison still runs; any other failure stops here.
status=0
$DBSOCK run "${targets[@]}" --provider local --n "$N" -q \
  --out "$OUT/results.json" --out "$OUT/report.html" --out "$OUT/report.md" "${thresholds[@]}" "${extra[@]}" || status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then exit "$status"; fi

if [ -f "$BASELINE" ]; then
  # Exit 4: a regression beyond the bound; 1: a case could not be checked.
  cmp=0
  $DBSOCK compare "$BASELINE" "$OUT/results.json" --fail-on-regression "$BOUND" > "$OUT/compare.md" || cmp=$?
  if [ "$cmp" -eq 0 ]; then echo "ci: no regression beyond $BOUND against $BASELINE"; fi
  if [ "$status" -eq 0 ]; then status=$cmp; fi
else
  echo "ci: no baseline at $BASELINE; keep $OUT/results.json as one"
fi
exit "$status"
