#!/usr/bin/env bash
# Does an answer hold from run to run? Run by hand, alone (nothing else on
# the machine: it takes about RUNS minutes).
#
# RUNS (default 8) back-to-back runs of the default command with the C
# stack beside Go's,
#   dbsock run TARGETS --provider local --clients go,c
# (TARGETS default "mysql postgres"; each run's Go client is dbsock's
# default: a fresh process of dbsock's agent for each server instance).
# For each target, placement (auto's: shared and split on 2 CPUs or more)
# and stack: every run's p50 speedup with its 95%
# interval and verdict, then the coverage: in how many runs the interval
# holds the median of all RUNS speedups (Kalibera and Jones: an interval
# that holds still covers the next run's answer; the goal is at least 7
# of 8, scaled to RUNS), and whether Go's verdict agrees in direction with
# C's in every run (a winner on opposite sides, or one stack's winner
# where the other names none, is listed).
# CLIENT=inprocess runs Go's client in dbsock's own process instead (one
# process for the whole run), for the comparison.
# EXTRA adds flags to every run (EXTRA="--placement split").
# KEEP=DIR keeps each run's JSON there (run-N.json) for a closer look.
# Each run's line gives the spread of its server instances' speedups
# (within-run) beside the interval, and the share of the machine's CPU
# time the hypervisor gave to others during the run (steal, from
# /proc/stat): a run-level effect that no interval within one run sees,
# and how long the client waited per op for its CPU (schedstat: a C
# client that waits more than a few microseconds had other work beside
# it).
# It exits 1 when a coverage is below the goal.
# Needs the local servers and the C stack (scripts/install-deps.sh
# --with-stacks) and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-8}"
read -r -a targets <<< "${TARGETS:-mysql postgres}"
client="${CLIENT:-host}"
read -r -a extra <<< "${EXTRA:-}"
command -v jq >/dev/null 2>&1 || { echo "holds: jq is needed (apt-get install jq)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/dbsock" ./cmd/dbsock
db="$work/dbsock"
failed=0

# steal: the machine's steal and total jiffies so far, from /proc/stat.
steal() { awk '$1 == "cpu" { t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t }' /proc/stat; }

# rows FILE: target, stack, speedup, lo, hi, verdict, one line each.
rows() {
  jq -r '.summary[] | (.comparisons[] | select(.path == "unix")) as $u |
    [(.target + (if (.placement // "") == "" then "" elif .placement == "same" then "/shared" else "/" + .placement end)), (if (.stack // "") == "" then "go" else .stack end), ($u.speedup_p50|tostring),
     (($u.speedup_p50_ci.lo // 0)|tostring), (($u.speedup_p50_ci.hi // 0)|tostring), $u.verdict,
     ((($u.instance_speedups // []) | min // 0)|tostring), ((($u.instance_speedups // []) | max // 0)|tostring),
     (([.sides[] | select(.path == "tcp") | .cpu.client_wait_ns_per_op // 0][0] // 0) / 1000 | tostring)] | @tsv' "$1"
}

echo "== $runs runs of: dbsock run ${targets[*]} --provider local --clients go,c --client $client ${extra[*]}"
for i in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  read -r s0 t0 < <(steal)
  "$db" run "${targets[@]}" --provider local --clients go,c --client "$client" "${extra[@]}" -q --format json > "$work/run-$i.json"
  end=$(date +%s.%N)
  read -r s1 t1 < <(steal)
  [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$work/run-$i.json" "$KEEP/run-$i.json"
  echo "run $i ($(jq -r '(if ((.config.placements // []) | length) > 1 then ([.config.placements[] | .mode + ": client CPU " + .client_cpus + ", servers CPU " + .server_cpus] | join("; ")) else .config.placement.mode + ": client CPU " + .config.placement.client_cpus + ", servers CPU " + .config.placement.server_cpus end) + "; " + .environment.cpu_model' "$work/run-$i.json"), $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }') s, steal $(awk -v s="$((s1 - s0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.2f", (t > 0 ? 100 * s / t : 0) }')%):"
  rows "$work/run-$i.json" | tee -a "$work/all.tsv" |
    awk -F'\t' '{ printf "  %-16s %-3s %.3f (95%% CI %.3f-%.3f; instances %.3f..%.3f; client waits %.1f us/op for its CPU over TCP)  %s\n", $1, $2, $3, $4, $5, $7, $8, $9, $6 }'
  # Each run's Go and C verdicts, side by side.
  rows "$work/run-$i.json" | awk -F'\t' -v run="$i" '
    { d = ($6 ~ /^Unix faster/) ? "unix" : ($6 ~ /^TCP faster/) ? "tcp" : "none"; dir[$1, $2] = d; t[$1] = 1 }
    END { for (x in t) if (dir[x, "go"] != dir[x, "c"]) printf "  run %s %s: Go says %s, C says %s\n", run, x, dir[x, "go"], dir[x, "c"] }' >> "$work/disagree.txt"
done

echo "per target and stack over the $runs runs:"
need=$(( (runs * 7 + 7) / 8 ))
while IFS=$'\t' read -r t s; do
  line=$(awk -F'\t' -v t="$t" -v s="$s" -v need="$need" '$1 == t && $2 == s { n++; v[n] = $3; lo[n] = $4; hi[n] = $5; sorted[n] = $3 }
    END {
      m = asort(sorted); med = (m % 2) ? sorted[(m + 1) / 2] : (sorted[m / 2] + sorted[m / 2 + 1]) / 2
      for (i = 1; i <= n; i++) if (lo[i] <= med && med <= hi[i]) c++
      printf "  %-16s %-3s speedups %.3f..%.3f  coverage %d of %d (median %.3f) %s\n", t, s, sorted[1], sorted[m], c, n, med, (c >= need) ? "ok" : "BELOW GOAL" }' "$work/all.tsv")
  echo "$line"
  case "$line" in *"BELOW GOAL"*) failed=1 ;; esac
done < <(cut -f1,2 "$work/all.tsv" | sort -u)
if [ -s "$work/disagree.txt" ]; then
  echo "runs where Go's verdict and C's differ in direction:"
  cat "$work/disagree.txt"
else
  echo "Go's verdict and C's agree in direction in every run."
fi
exit "$failed"
