#!/usr/bin/env bash
# Measures what dbsock's own harness costs and prints one table:
#   - timing + recording per op around an op that does nothing, alone and
#     inside a round's interleaved blocks;
#   - dbsock's echo p50 against a minimal hand-written Go loop on the same
#     server and transport (client and server pinned to CPU 0);
#   - the floor target's p50 against a minimal blocking-syscall ping-pong
#     (in Go, and in C: scripts/floor.c, built here with cc)
#     (both sides in the benchmark, on locked threads, pinned to CPU 0);
#   - peak RSS of "dbsock run echo --n 10000000" (set DBSOCK_BENCH_N to change N).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
cfloor=$(mktemp)
trap 'rm -f "$out" "$cfloor"' EXIT
# The kernel floor in C, built with this machine's compiler, for the
# floor target to be compared with.
command -v cc >/dev/null 2>&1 || { echo "bench: needs a C compiler for scripts/floor.c (apt-get install gcc)" >&2; exit 1; }
cc -O2 -pthread -o "$cfloor" scripts/floor.c
export DBSOCK_FLOOR_C="$cfloor"
go test -run '^$' -bench 'Harness' -benchmem -count 5 ./scenarios/ | tee -a "$out"
go test -run '^$' -bench 'EchoVsMinimal|FloorVsMinimal' -benchtime 3x ./scenarios/ | tee -a "$out"
go test -run '^$' -bench 'PeakRSS' -benchtime 1x -timeout 30m ./cmd/dbsock/ | tee -a "$out"

metric() { # metric UNIT: the median of the values printed before UNIT on Benchmark lines
  awk -v unit="$1" '/^Benchmark/ { for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1) }' "$out" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
echo
echo "| figure | measured | goal |"
echo "|---|--:|---|"
median_of() { awk -v re="$1" '$0 ~ re { print $3 }' "$out" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "| timing + recording per op (median of 5) | $(median_of '^BenchmarkHarness-') ns, $(metric allocs/op) allocs | under 100 ns, 0 allocs |"
echo "| the same inside a round of 10 block pairs (median of 5) | $(median_of '^BenchmarkHarnessBlocks-') ns | within 5% of the line above |"
echo "| the same over 10,000 rows, uniform keys handed out per block pair (median of 5) | $(median_of '^BenchmarkHarnessKeyed-') ns | within 5% of the line above |"
echo "| the same under --op mixed:95/5, reads and writes recorded apart (median of 5) | $(median_of '^BenchmarkHarnessMixed-') ns | within 5% of the line above |"
for t in tcp unix; do
  echo "| echo p50 $t: dbsock / minimal loop | $(metric $t-ratio) ($(metric $t-dbsock-p50-ns) / $(metric $t-minimal-p50-ns) ns) | within 5% (0.95 to 1.05) |"
done
for t in tcp unix; do
  echo "| floor p50 $t: dbsock / minimal blocking ping-pong in Go | $(metric $t-floor-ratio) ($(metric $t-floor-p50-ns) / $(metric $t-minimal-p50-ns) ns) | within 20% (0.8 to 1.2) |"
  echo "| floor p50 $t: dbsock / the same ping-pong in C (scripts/floor.c) | $(metric $t-floor-c-ratio) ($(metric $t-floor-p50-ns) / $(metric $t-c-p50-ns) ns) | within 10% (0.9 to 1.1) |"
done
echo "| peak RSS, run echo --n $(metric ops-per-transport) | $(metric peak-RSS-MB) MB | under 64 MB |"
