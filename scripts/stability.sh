#!/usr/bin/env bash
# Stability check, run by hand (it takes several minutes; nothing else should
# run on the machine meanwhile): do dbsock's numbers hold still, and do its
# intervals cover what the next run finds?
#  1. RUNS (default 10) back-to-back default runs of
#     dbsock run mysql redis postgres echo --provider local:
#     every verdict, the p50 speedup and its 95% interval per run; per target
#     the largest speedup over the smallest, and the coverage: in how many
#     runs the interval contains the median of all RUNS estimates (a 95%
#     interval should miss about one run in twenty; the goal is at least 9
#     of 10).
#  2. The same command while a noisy neighbour runs (a busy loop for 0.3 s
#     every 2 s, not pinned): verdicts and the noisy blocks flagged.
#  3. RUNS runs of the design card's command, dbsock run mysql --n 10000:
#     verdicts, warnings and coverage.
#  4. dbsock.Compare and dbsock run on the same query agree (within 10%
#     or overlapping intervals).
#  5. 50 back-to-back restarts of every server dbsock starts locally, each
#     followed at once by a login over both endpoints (TestRestartsAcceptLogins
#     with DBSOCK_RESTARTS=50; make test runs 3).
#  6. The open loop holds its rate: echo at --rate 2000 achieves 2000
#     ops/s within 10% (TestRateHoldsOnEcho with DBSOCK_TIMING=1; make
#     test checks only that it never runs ahead).
#  7. AA_RUNS (default 20) runs of dbsock run redis postgres mysql --paths
#     tcp,tcp2,unix --provider local: tcp2 is an A/A control (TCP again), so
#     a winner named on it is a false positive. The goal: no winner on tcp2
#     in at least 19 of 20 runs, and unix faster in every run.
#  8. The kernel floor from C: FLOOR_RUNS (default 3) times, alternating,
#     dbsock run floor --clients c --paths tcp,unix --provider local --n
#     FLOOR_N (default 20000) and agents/c/floor-pingpong (a plain C
#     blocking ping-pong, FLOOR_N ops per path in interleaved blocks) against
#     dbsock's floor server, on the CPUs the run's placement gave client and
#     server: both p50s per path and their ratio (unlike scripts/floor.c,
#     C on both sides, only the client differs here). The goal: the C agent
#     within 10% of the plain C ping-pong on both paths (the median ratio
#     of the runs).
# ONLY=7 (or ONLY="1 7") runs only those sections.
# It exits 1 when a coverage is below 9 of 10 (scaled to RUNS), a card
# run is not "Unix faster" or has a warning, a login after a restart
# fails, the A/A control misses its goal, or the C agent's floor is beyond
# 10% of the plain C ping-pong.
# Needs the local servers (scripts/install-deps.sh) and jq.
# Its companion, scripts/peers.sh (run the same way, alone), checks dbsock's
# C client stack against redis-benchmark, pgbench -S -M prepared and sysbench
# oltp_point_select on the same servers and CPU: their TCP/Unix ratios of
# mean latency must agree within 10%.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-10}"
aa_runs="${AA_RUNS:-20}"
floor_runs="${FLOOR_RUNS:-3}"
floor_n="${FLOOR_N:-20000}"
only="${ONLY:-1 2 3 4 5 6 7 8}"
# section N: whether section N is to run (ONLY).
section() { [[ " $only " == *" $1 "* ]]; }
failed=0
targets=(mysql redis postgres echo)
command -v jq >/dev/null 2>&1 || { echo "stability: jq is needed (apt-get install jq)" >&2; exit 1; }
work=$(mktemp -d)
neighbour=""
floor_server=""
cleanup() {
  [ -n "$neighbour" ] && kill "$neighbour" 2>/dev/null || true
  [ -n "$floor_server" ] && kill "$floor_server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/dbsock" ./cmd/dbsock
db="$work/dbsock"

# row FILE: one line per summary: target, speedup, lo, hi, half-width %, noisy blocks, warnings, verdict.
row() {
  jq -r '.summary[] | (.comparisons[] | select(.path == "unix")) as $u |
    [.target, ($u.speedup_p50|tostring), (($u.speedup_p50_ci.lo // 0)|tostring), (($u.speedup_p50_ci.hi // 0)|tostring),
    (((($u.speedup_p50_ci.hi // 0) - ($u.speedup_p50_ci.lo // 0)) / 2 / $u.speedup_p50 * 100)|tostring),
    ((.noisy_blocks // [])|length|tostring), ((.warnings // [])|length|tostring), $u.verdict] | @tsv' "$1" |
    awk -F'\t' '{ printf "  %-9s speedup %.3f (95%% CI %.3f-%.3f, half-width %.1f%%)  noisy blocks %2d  warnings %d  %s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
}

# summary TARGET FILE...: spread, median half-width, "Unix faster" count and
# coverage of TARGET's p50 speedup over the runs in FILE...; coverage below
# 9 of 10 (scaled) marks the check failed.
summary() {
  local t="$1"
  shift
  local line
  line=$(jq -r --arg t "$t" '.summary[] | select(.target == $t) | .comparisons[] | select(.path == "unix") |
    [.speedup_p50, (.speedup_p50_ci.lo // 0), (.speedup_p50_ci.hi // 0), (.verdict | startswith("Unix faster"))] | @tsv' "$@" |
    awk -v t="$t" '{ s[NR] = $1; lo[NR] = $2; hi[NR] = $3; if ($4 == "true") u++; h[NR] = ($3 - $2) / 2 / $1 * 100 } END {
      for (i = 1; i <= NR; i++) sorted[i] = s[i]
      n = asort(sorted); med = (n % 2) ? sorted[(n + 1) / 2] : (sorted[n / 2] + sorted[n / 2 + 1]) / 2
      m = asort(h); mh = (m % 2) ? h[(m + 1) / 2] : (h[m / 2] + h[m / 2 + 1]) / 2
      for (i = 1; i <= NR; i++) if (lo[i] <= med && med <= hi[i]) c++
      need = int(NR * 9 / 10 + 0.999)
      printf "  %-9s speedups %.3f..%.3f (largest/smallest %.3f)  median half-width %.1f%%  \"Unix faster\" in %d of %d  coverage %d of %d (median %.3f) %s\n",
        t, sorted[1], sorted[n], sorted[n] / sorted[1], mh, u, NR, c, NR, med, (c >= need) ? "ok" : "BELOW GOAL" }')
  echo "$line"
  case "$line" in *"BELOW GOAL"*) failed=1 ;; esac
}

if section 1; then
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
    summary "$t" "$work"/quiet-*.json
  done

fi
if section 2; then
  echo "== 2. the same with a noisy neighbour (busy 0.3 s every 2 s, not pinned)"
  ( while :; do timeout 0.3 sh -c 'while :; do :; done' || true; sleep 1.7; done ) &
  neighbour=$!
  "$db" run "${targets[@]}" --provider local -q --format json > "$work/noisy.json"
  kill "$neighbour" 2>/dev/null || true
  wait "$neighbour" 2>/dev/null || true
  neighbour=""
  row "$work/noisy.json"
  jq -r '.summary[] | .target as $t | (.noisy_blocks // [])[] | "  noisy: \($t) \(.transport) round \(.round) at \(.start_ns / 1e9 * 1000 | floor) ms, p50 \(.p50_ns / 1000) us (z \(.z * 10 | floor / 10))"' "$work/noisy.json" | head -40

fi
if section 3; then
  echo "== 3. $runs runs of: dbsock run mysql --n 10000"
  for i in $(seq 1 "$runs"); do
    start=$(date +%s.%N)
    "$db" run mysql --n 10000 -q --format json > "$work/card-$i.json"
    end=$(date +%s.%N)
    echo "run $i ($(jq -r '.config.provider + ", " + (.targets[0].server.product // "?")' "$work/card-$i.json"), $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s):"
    row "$work/card-$i.json"
    jq -r '.summary[] | (.warnings // [])[] | "    warning: " + .' "$work/card-$i.json"
    if ! jq -e '.summary[0] | (.verdict | startswith("Unix faster")) and ((.warnings // []) | length == 0)' "$work/card-$i.json" >/dev/null; then
      failed=1
    fi
  done
  summary mysql "$work"/card-*.json
fi
if section 4; then
  echo "== 4. dbsock.Compare against dbsock run on the same query (TestCompareAgreesWithRun)"
  if ! DBSOCK_TIMING=1 DBSOCK_REQUIRE_SERVERS=1 go test -count=1 -run TestCompareAgreesWithRun -v . | grep -E 'your op|^(ok|FAIL|---)'; then
    failed=1
  fi
fi
if section 5; then
  echo "== 5. 50 restarts of each server, each followed at once by a login over both endpoints"
  if ! DBSOCK_RESTARTS=50 DBSOCK_REQUIRE_SERVERS=1 go test -count=1 -run TestRestartsAcceptLogins ./targets/all/; then
    failed=1
  fi
fi
if section 6; then
  echo "== 6. the open loop holds --rate 2000 on echo within 10%"
  if ! DBSOCK_TIMING=1 DBSOCK_REQUIRE_SERVERS=1 go test -count=1 -run TestRateHoldsOnEcho ./cmd/dbsock/; then
    failed=1
  fi
fi
if section 7; then
  echo "== 7. $aa_runs runs of: dbsock run redis postgres mysql --paths tcp,tcp2,unix --provider local (tcp2: an A/A control)"
  clean=0
  for i in $(seq 1 "$aa_runs"); do
    "$db" run redis postgres mysql --paths tcp,tcp2,unix --provider local -q --format json > "$work/aa-$i.json"
    winners=$(jq -r '[.summary[] | .target as $t | .comparisons[] | select(.path == "tcp2" and (.verdict_kind | IN("path_faster", "tcp_faster", "unix_faster", "baseline_faster"))) | $t] | join(",")' "$work/aa-$i.json")
    unix=$(jq -r '[.summary[] | .comparisons[] | select(.path == "unix") | .verdict_kind] | join(",")' "$work/aa-$i.json")
    echo "  run $i: tcp2 $(jq -r '[.summary[] | .target + " " + (.comparisons[] | select(.path == "tcp2") | (.speedup_p50 * 1000 | round / 1000 | tostring) + " " + .verdict_kind)] | join(", ")' "$work/aa-$i.json"); unix $unix"
    [ -z "$winners" ] && clean=$((clean + 1))
    [[ "$unix" == "unix_faster,unix_faster,unix_faster" ]] || { echo "  run $i: unix lost its verdict ($unix)"; failed=1; }
  done
  need=$(( (aa_runs * 19 + 19) / 20 ))
  echo "  tcp2 named no winner in $clean of $aa_runs runs (goal: at least $need)"
  [ "$clean" -ge "$need" ] || failed=1
fi
if section 8; then
  echo "== 8. the kernel floor from C, in $floor_runs rounds of: dbsock run floor --clients c --paths tcp,unix --n $floor_n, then a plain C blocking ping-pong (agents/c/floor-pingpong) on the same server and CPUs"
  [ -f agents/.stacks/complete ] || { echo "stability: section 8 needs the client stacks (scripts/install-deps.sh --with-stacks)" >&2; exit 1; }
  make -s -C agents/c floor-pingpong
  for i in $(seq 1 "$floor_runs"); do
    "$db" run floor --clients c --paths tcp,unix --provider local -q --format json --n "$floor_n" > "$work/floor-$i.json"
    # The reference runs against dbsock's floor server too, started as dbsock
    # starts it (a child process of its binary), on the CPUs the run used.
    client_cpus=$(jq -r '.config.placement.client_cpus // ""' "$work/floor-$i.json")
    server_cpus=$(jq -r '.config.placement.server_cpus // ""' "$work/floor-$i.json")
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    sock="$work/floor-$i.sock"
    DBSOCK_CHILD_SERVER="floor 127.0.0.1:$port $sock" ${server_cpus:+taskset -c "$server_cpus"} "$db" &
    floor_server=$!
    for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.05; done
    ${client_cpus:+taskset -c "$client_cpus"} agents/c/floor-pingpong "127.0.0.1:$port" "$sock" "$floor_n" > "$work/ref-$i.txt"
    kill "$floor_server"
    wait "$floor_server" 2>/dev/null || true
    floor_server=""
    for path in tcp unix; do
      agent=$(jq -r --arg p "$path" '.summary[] | select(.stack == "c") | .sides[] | select(.path == $p) | .latency_ns.p50' "$work/floor-$i.json")
      ref=$(awk -v p="$path" '$1 == p { print $2 }' "$work/ref-$i.txt")
      echo "$path $agent $ref" >> "$work/floor-ratios.txt"
      awk -v i="$i" -v p="$path" -v a="$agent" -v r="$ref" -v c="$client_cpus" -v s="$server_cpus" 'BEGIN {
        printf "  run %d %-4s  dbsock (C agent) p50 %.2f us  plain C p50 %.2f us  ratio %.3f  (client CPUs %s, server CPUs %s)\n", i, p, a / 1000, r / 1000, a / r, c, s }'
    done
  done
  for path in tcp unix; do
    line=$(awk -v p="$path" '$1 == p { r[++n] = $2 / $3 } END {
      m = asort(r); med = (m % 2) ? r[(m + 1) / 2] : (r[m / 2] + r[m / 2 + 1]) / 2
      printf "  %-4s median ratio %.3f over %d runs %s", p, med, m, (med >= 0.9 && med <= 1.1) ? "ok" : "BEYOND 10%" }' "$work/floor-ratios.txt")
    echo "$line"
    case "$line" in *"BEYOND"*) failed=1 ;; esac
  done
fi
if [ "$failed" = 1 ]; then
  echo "stability: below the goal (see above)"
  exit 1
fi
echo "stability: every section run met its goal (coverage at least 9 of 10, card runs \"Unix faster\" without a warning, tcp2 quiet in 19 of 20 runs, the C agent's floor within 10% of plain C)"
