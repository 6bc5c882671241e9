#!/usr/bin/env bash
# Stability check, run by hand (it takes a few minutes; nothing else should
# run on the machine meanwhile): do dbsock's numbers hold still?
#  1. RUNS (default 5) back-to-back runs of
#     dbsock run mysql redis postgres echo --provider local (no placement flag):
#     every verdict, the p50 speedup and its 95% interval half-width per run,
#     and per target the largest speedup over the smallest.
#  2. The same command while a noisy neighbour runs (a busy loop for 0.3 s
#     every 2 s, not pinned): verdicts and the noisy blocks flagged.
#  3. RUNS runs of the design card's command, dbsock run mysql --n 10000:
#     verdicts and warnings.
# Needs the local servers (scripts/install-deps.sh) and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-5}"
targets=(mysql redis postgres echo)
command -v jq >/dev/null 2>&1 || { echo "stability: jq is needed (apt-get install jq)" >&2; exit 1; }
work=$(mktemp -d)
neighbour=""
cleanup() {
  [ -n "$neighbour" ] && kill "$neighbour" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/dbsock" ./cmd/dbsock
db="$work/dbsock"

# row FILE: one line per summary: target, speedup, lo, hi, half-width %, noisy blocks, warnings, verdict.
row() {
  jq -r '.summary[] | [.target, (.unix_speedup_p50|tostring), ((.unix_speedup_p50_ci.lo // 0)|tostring), ((.unix_speedup_p50_ci.hi // 0)|tostring),
    ((((.unix_speedup_p50_ci.hi // 0) - (.unix_speedup_p50_ci.lo // 0)) / 2 / .unix_speedup_p50 * 100)|tostring),
    ((.noisy_blocks // [])|length|tostring), ((.warnings // [])|length|tostring), .verdict] | @tsv' "$1" |
    awk -F'\t' '{ printf "  %-9s speedup %.3f (95%% CI %.3f-%.3f, half-width %.1f%%)  noisy blocks %2d  warnings %d  %s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
}

echo "== 1. $runs runs of: dbsock run ${targets[*]} --provider local"
for i in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  "$db" run "${targets[@]}" --provider local -q --format json > "$work/quiet-$i.json"
  end=$(date +%s.%N)
  echo "run $i ($(jq -r '.config.placement.mode + " client " + .config.placement.client_cpus + " server " + .config.placement.server_cpus' "$work/quiet-$i.json"), $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s):"
  row "$work/quiet-$i.json"
done
echo "per target over the $runs runs:"
for t in "${targets[@]}"; do
  jq -r --arg t "$t" '.summary[] | select(.target == $t) | [.unix_speedup_p50, ((.unix_speedup_p50_ci.hi - .unix_speedup_p50_ci.lo) / 2 / .unix_speedup_p50 * 100), (.verdict | startswith("Unix faster"))] | @tsv' "$work"/quiet-*.json |
    sort -g | awk -v t="$t" '{ s[NR] = $1; h[NR] = $2; if ($3 == "true") u++ } END {
      n = asort(h); med = (n % 2) ? h[(n + 1) / 2] : (h[n / 2] + h[n / 2 + 1]) / 2
      printf "  %-9s speedups %.3f..%.3f (largest/smallest %.3f)  median half-width %.1f%%  \"Unix faster\" in %d of %d\n", t, s[1], s[NR], s[NR] / s[1], med, u, NR }'
done

echo "== 2. the same with a noisy neighbour (busy 0.3 s every 2 s, not pinned)"
( while :; do timeout 0.3 sh -c 'while :; do :; done' || true; sleep 1.7; done ) &
neighbour=$!
"$db" run "${targets[@]}" --provider local -q --format json > "$work/noisy.json"
kill "$neighbour" 2>/dev/null || true
wait "$neighbour" 2>/dev/null || true
neighbour=""
row "$work/noisy.json"
jq -r '.summary[] | .target as $t | (.noisy_blocks // [])[] | "  noisy: \($t) \(.transport) round \(.round) at \(.start_ns / 1e9 * 1000 | floor) ms, p50 \(.p50_ns / 1000) us (z \(.z * 10 | floor / 10))"' "$work/noisy.json" | head -40

echo "== 3. $runs runs of: dbsock run mysql --n 10000"
for i in $(seq 1 "$runs"); do
  "$db" run mysql --n 10000 -q --format json > "$work/card-$i.json"
  echo "run $i:"
  row "$work/card-$i.json"
  jq -r '.summary[] | (.warnings // [])[] | "    warning: " + .' "$work/card-$i.json"
done
