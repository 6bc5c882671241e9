#!/usr/bin/env bash
# Soak: runs "dbsock run echo" for a long time (default 10 minutes per
# transport, DURATION to change) and samples dbsock's resident memory every
# 10 seconds. Memory must stay flat: dbsock keeps histograms, not samples.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${DURATION:-10m}"
bin=$(mktemp -d)/dbsock
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/dbsock
"$bin" run echo --duration "$duration" --rounds 1 --placement same -q --format json > /dev/null &
pid=$!
echo "dbsock pid $pid, run echo --duration $duration per transport; RSS every 10 s:"
min=0 max=0 n=0
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
  if [ -n "$rss" ]; then
    n=$((n + 1))
    [ "$min" -eq 0 ] || [ "$rss" -lt "$min" ] && min=$rss
    [ "$rss" -gt "$max" ] && max=$rss
    echo "  $(date +%T) ${rss} kB"
  fi
  sleep 10
done
wait "$pid"
echo "samples $n, RSS min ${min} kB, max ${max} kB, growth $((max - min)) kB"
