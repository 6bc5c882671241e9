#!/usr/bin/env bash
# What Go's client and C's do between a request and its answer, by path and
# placement, from the kernel's own counters. Run by hand, alone (nothing
# else on the machine: it takes a few minutes).
#
# 1. dbsock run TARGETS --provider local --clients go,c --placement
#    shared,split: for each case and side, the client's CPU, context
#    switches and system calls per op (the agent's process tree, /proc),
#    and each side's wait for a CPU per op (schedstat's run delay), with
#    the p50s and the speedup.
# 2. With PERF=1 (root, perf installed), `perf sched record` around one
#    case per stack (TARGET1, the first target; unix and tcp; placed shared)
#    and `perf sched latency`: the server's and the client's scheduling
#    delays as the kernel's tracepoints saw them (sched_wakeup to
#    sched_switch), to check step 1's schedstat figures against.
# TARGETS defaults to "postgres mysql". Needs the local servers, the C
# stack (scripts/install-deps.sh --with-stacks) and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a targets <<< "${TARGETS:-postgres mysql}"
command -v jq >/dev/null 2>&1 || { echo "mechanism: jq is needed (apt-get install jq)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/dbsock" ./cmd/dbsock
db="$work/dbsock"

echo "== dbsock run ${targets[*]} --provider local --clients go,c --placement shared,split ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r))"
"$db" run "${targets[@]}" --provider local --clients go,c --placement shared,split -q --format json > "$work/run.json"
printf '%-9s %-3s %-6s %-5s %8s %9s %7s %9s %10s %10s %9s\n' target stk place path "p50 µs" "cli CPU" csw syscalls "cli wait" "srv wait" "srv CPU"
jq -r '.summary[] | . as $s | (.comparisons[] | select(.path == "unix")) as $u |
  .sides[] | [$s.target, (if ($s.stack // "") == "" then "go" else $s.stack end), ($s.placement // "-"), .path,
    ((.latency_ns.p50 // 0) / 1000), ((.cpu.client_ns_per_op // 0) / 1000), (.cpu.client_csw_per_op // 0), (.cpu.client_syscalls_per_op // 0),
    ((.cpu.client_wait_ns_per_op // 0) / 1000), ((.cpu.server_wait_ns_per_op // 0) / 1000), ((.cpu.server_ns_per_op // 0) / 1000), $u.speedup_p50] | @tsv' "$work/run.json" |
  awk -F'\t' '{ printf "%-9s %-3s %-6s %-5s %8.1f %9.1f %7.2f %9.2f %10.1f %10.1f %9.1f   (unix speedup %.2f×)\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }'
echo "(µs per op; cli CPU: the client process's CPU; csw: its context switches; syscalls: its system calls; cli wait/srv wait: time each side's runnable threads waited for a CPU; srv CPU: the server's CPU)"

if [ "${PERF:-0}" = 1 ]; then
  t="${targets[0]}"
  for stack in go c; do
    echo "== perf sched latency: dbsock run $t --clients $stack --placement shared --instances 1 --n 20000"
    perf sched record -q -o "$work/sched.data" -- "$db" run "$t" --provider local --clients "$stack" --placement shared --instances 1 --n 20000 -q --format json > /dev/null 2>&1
    perf sched latency -i "$work/sched.data" --sort max 2>/dev/null | grep -E "Task|postgres|mariadbd|mysqld|redis|dbsock|agent" | head -12
  done
fi
