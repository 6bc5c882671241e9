#!/usr/bin/env bash
# dbsock at an application's load against the field's own generator, run
# by hand, alone on a quiet machine (about 15 minutes at the defaults, 3 rounds):
#   1. does dbsock's open loop keep its schedule as pgbench --rate does
#      (its mean schedule lag no larger than pgbench's), and is its mean
#      latency within TOLERANCE_LAT percent of pgbench's "latency average"
#      over each path, and the TCP/Unix ratio of the two within
#      TOLERANCE_LAT percent of pgbench's? Both count from the scheduled
#      start, so each holds its generator's own lag: the check compares
#      them net of it (latency - lag), and prints them as given too;
#   2. does dbsock's capacity gain (the server's CPU per op over TCP over
#      the socket's, paired by block) agree within TOLERANCE_CAP percent
#      with the same ratio read from /proc while a C client (pgbench)
#      offers the same rate over each path?
#
# It starts a private PostgreSQL (initdb in a temporary directory, mode
# 0700; as root it runs as SERVER_USER, default nobody) on 127.0.0.1 at a
# free port and its Unix socket, pinned with taskset to SERVER_CPU, and
# stops and removes it on exit, on error and on Ctrl-C. The clients run on
# CLIENT_CPU, without autovacuum (its tables analyzed once, after pgbench's
# set-up), so that the server's CPU while measured is the lookups'. Then,
# ROUNDS times (the paths' order alternating):
#   pgbench -S -M prepared -n -c CLIENTS -j 2 -R RATE -T DURATION over TCP,
#     then over the socket (pgbench's own table at scale 1); the server's
#     CPU over each is its process tree's utime + stime from /proc/PID/stat,
#     with the backends that exited (the postmaster's cutime + cstime), in
#     clock ticks, per transaction processed;
#   dbsock run postgres --provider external --concurrency CLIENTS --rate
#     RATE --client-cpu CLIENT_CPU --server-pid postgres=PID --clients
#     STACKS (both paths, interleaved blocks, INSTANCES fresh sets of
#     connections; each stack checked: Go's drivers, and the C stack's
#     libpq, the library pgbench itself uses, prepared as -M prepared).
# It prints each figure and the gaps, and exits 0 when every check holds,
# 1 when one does not (or a step failed), 2 on a bad setting.
#
# Settings (environment): RATE=3000, CLIENTS=16, DURATION=15 (pgbench's -T), ROUNDS=3,
# STACKS=go,c (dbsock's --clients; the C stack needs
# scripts/install-deps.sh --with-stacks),
# INSTANCES=9, CLIENT_CPU=0, SERVER_CPU=1, TOLERANCE_LAT=15,
# TOLERANCE_CAP=10, SERVER_USER=nobody (as root only), OUT=DIR (keep the
# outputs there, results.tsv among them), JUDGE=FILE (nothing measured:
# only the verdict on the results.tsv an earlier run kept).
#
# Passwords: the server's superuser gets a new random one, written to 0600
# files only: dbsock reads it with --postgres-password-file, pgbench from
# PGPASSFILE (which names the file); none is printed or put in argv.
#
# Needs jq, taskset, PostgreSQL (scripts/install-deps.sh) and Go.
set -euo pipefail
cd "$(dirname "$0")/.."

RATE="${RATE:-3000}"
CLIENTS="${CLIENTS:-16}"
DURATION="${DURATION:-15}"
ROUNDS="${ROUNDS:-3}"
INSTANCES="${INSTANCES:-9}"
CLIENT_CPU="${CLIENT_CPU:-0}"
SERVER_CPU="${SERVER_CPU:-1}"
TOLERANCE_LAT="${TOLERANCE_LAT:-15}"
TOLERANCE_CAP="${TOLERANCE_CAP:-10}"
SERVER_USER="${SERVER_USER:-nobody}"
OUT="${OUT:-}"
STACKS="${STACKS:-go,c}"
[[ "$STACKS" =~ ^[a-z]+(,[a-z]+)*$ ]] || { echo "load-anchor: STACKS: \"$STACKS\" is not a list of stacks such as go,c" >&2; exit 2; }

bad() { echo "load-anchor: $1: $2" >&2; exit 2; }
die() { echo "load-anchor: $*" >&2; exit 1; }

# judge FILE: the verdict on a results file of this script (below), per
# stack; returns 1 when a check fails.
judge() {
  echo
  echo "Medians over $(cut -f2 "$1" | sort -u | wc -l) round(s); the checks are on the net (latency - lag) figures, the lag and the capacity:"
  local fail=0 stack
  for stack in $(cut -f1 "$1" | awk '!seen[$0]++'); do
    awk -F'\t' -v st="$stack" -v tl="$TOLERANCE_LAT" -v tc="$TOLERANCE_CAP" '
      function median(a, n,   i, j, v) {
        for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j > 0 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      function gap(a, b) { return (a / b - 1) * 100 }
      function ok(g, t) { return g <= t && g >= -t }
      $1 == st {
        n++; lib = $14
        pl["tcp", n] = $3; pg["tcp", n] = $4; pl["unix", n] = $5; pg["unix", n] = $6; pc[n] = $7
        dl["tcp", n] = $8; dg["tcp", n] = $9; dl["unix", n] = $10; dg["unix", n] = $11; dc[n] = $12
        if ($13 == "true") behind++
        if ($15 == "true") woke++
      }
      function col(arr, p,   i, out) { for (i = 1; i <= n; i++) m[i] = arr[p, i]; return median(m, n) }
      function colnet(l, g, p,   i) { for (i = 1; i <= n; i++) m[i] = l[p, i] - g[p, i]; return median(m, n) }
      function colratio(l, g, net,   i) {
        for (i = 1; i <= n; i++) m[i] = (l["tcp", i] - net * g["tcp", i]) / (l["unix", i] - net * g["unix", i])
        return median(m, n)
      }
      END {
        if (!n) { print "  " st ": no figures"; exit 1 }
        gsub("_", " ", lib); fail = 0
        printf "  dbsock from %s (%s):\n", st, lib
        printf "    %-9s %-28s %-28s %s\n", "", "pgbench", "dbsock", "gap"
        for (pi = 1; pi <= 2; pi++) {
          p = pi == 1 ? "tcp" : "unix"
          a = col(pl, p); b = col(dl, p); printf "    %-9s %-28s %-28s %+.1f%% (as given)\n", p " mean", sprintf("%.3f ms", a), sprintf("%.3f ms", b), gap(b, a)
          a = colnet(pl, pg, p); b = colnet(dl, dg, p); g = gap(b, a)
          printf "    %-9s %-28s %-28s %+.1f%% %s\n", p " net", sprintf("%.3f ms", a), sprintf("%.3f ms", b), g, ok(g, tl) ? "OK" : "OVER " tl "%"
          if (!ok(g, tl)) fail = 1
          a = col(pg, p); b = col(dg, p)
          printf "    %-9s %-28s %-28s %s\n", p " lag", sprintf("%.3f ms", a), sprintf("%.3f ms", b), b <= a ? "OK (no larger)" : "LARGER"
          if (b > a) fail = 1
        }
        a = colratio(pl, pg, 0); b = colratio(dl, dg, 0)
        printf "    %-9s %-28s %-28s %+.1f%% (as given)\n", "TCP/Unix", sprintf("%.3f", a), sprintf("%.3f", b), gap(b, a)
        a = colratio(pl, pg, 1); b = colratio(dl, dg, 1); g = gap(b, a)
        printf "    %-9s %-28s %-28s %+.1f%% %s\n", "net ratio", sprintf("%.3f", a), sprintf("%.3f", b), g, ok(g, tl) ? "OK" : "OVER " tl "%"
        if (!ok(g, tl)) fail = 1
        for (i = 1; i <= n; i++) m[i] = pc[i]; a = median(m, n)
        for (i = 1; i <= n; i++) m[i] = dc[i]; b = median(m, n); g = gap(b, a)
        explained = !ok(g, tc) && b < a && woke * 2 > n
        printf "    %-9s %-28s %-28s %+.1f%% %s\n", "capacity", sprintf("%.3f (/proc)", a), sprintf("%.3f (paired)", b), g, ok(g, tc) ? "OK" : explained ? "OVER " tc "%, EXPLAINED" : "OVER " tc "%"
        if (explained) printf "    dbsock'"'"'s report explained the lower gain in %d of %d round(s): the socket woke this client more often than TCP, with the counts (its warning)\n", woke, n
        if (!ok(g, tc) && !explained) fail = 1
        if (behind) printf "    dbsock said its generator fell behind in %d of %d round(s)%s\n", behind, n, (behind * 2 > n) ? ": in most, so no verdict" : ""
        if (behind * 2 > n) fail = 1
        exit fail
      }' "$1" || fail=1
  done
  return "$fail"
}

# JUDGE=FILE: only the verdict on a results.tsv an earlier run kept (OUT).
if [ -n "${JUDGE:-}" ]; then
  [ -r "$JUDGE" ] || bad JUDGE "\"$JUDGE\" is not a readable file"
  judge "$JUDGE"
  exit $?
fi
for v in RATE CLIENTS DURATION ROUNDS INSTANCES CLIENT_CPU SERVER_CPU TOLERANCE_LAT TOLERANCE_CAP; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || bad "${v%_}" "\"${!v}\" is not a whole number"
done
[ "$ROUNDS" -ge 1 ] && [ "$CLIENTS" -ge 1 ] && [ "$RATE" -ge 1 ] || bad settings "ROUNDS, CLIENTS and RATE must be at least 1"
for tool in jq taskset go; do command -v "$tool" >/dev/null || bad "$tool" "not installed"; done
# OUT is made now, before anything runs: the results are copied there at
# the end, and a run of minutes must not end without them.
if [ -n "$OUT" ] && ! mkdir -p "$OUT" 2>/dev/null; then bad OUT "cannot make the directory \"$OUT\""; fi
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$PG_BIN/postgres" ] && [ -x "$PG_BIN/pgbench" ] || bad PostgreSQL "not installed (scripts/install-deps.sh)"

work=$(mktemp -d "${TMPDIR:-/tmp}/load-anchor.XXXXXX")
srv=$(mktemp -d "${TMPDIR:-/tmp}/load-anchor-srv.XXXXXX")
chmod 700 "$work" "$srv"
pg_pid=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$pg_pid" ]; then
    kill -INT "$pg_pid" 2>/dev/null || true
    for _ in $(seq 1 200); do kill -0 "$pg_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pg_pid" 2>/dev/null || true
  fi
  [ -z "$OUT" ] || cp "$work"/*.out "$work"/*.json "$OUT"/ 2>/dev/null || true
  rm -rf "$work" "$srv"
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "load-anchor: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

as_server=()
if [ "$(id -u)" -eq 0 ]; then
  as_server=(setpriv "--reuid=$SERVER_USER" "--regid=$(id -g "$SERVER_USER")" --clear-groups)
  chown "$SERVER_USER" "$srv"
fi
secret() { (umask 077 && printf '%s\n' "$2" >"$1"); }
pw=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
secret "$work/postgres.pw" "$pw"
secret "$work/pgpass" "*:*:*:bench:$pw"
secret "$srv/initdb.pw" "$pw"
[ "$(id -u)" -ne 0 ] || chown "$SERVER_USER" "$srv/initdb.pw"
unset pw
port=$((20000 + RANDOM % 40000))
while [ -n "$(ss -Htln "sport = :$port")" ]; do port=$((20000 + RANDOM % 40000)); done

echo "load-anchor: building dbsock" >&2
go build -o "$work/dbsock" ./cmd/dbsock
taskset -c "$SERVER_CPU" "${as_server[@]}" "$PG_BIN/initdb" -D "$srv/data" -U bench --pwfile="$srv/initdb.pw" \
  --auth-local=scram-sha-256 --auth-host=scram-sha-256 --no-sync -E UTF8 --locale=C >"$work/initdb.out" 2>&1 ||
  die "initdb failed: $(tail -n 5 "$work/initdb.out")"
rm -f "$srv/initdb.pw"
taskset -c "$SERVER_CPU" "${as_server[@]}" "$PG_BIN/postgres" -D "$srv/data" -c listen_addresses=127.0.0.1 -c port="$port" \
  -c unix_socket_directories="$srv" -c unix_socket_permissions=0700 -c fsync=off -c max_connections=100 -c autovacuum=off >"$work/postgres.out" 2>&1 &
pg_pid=$!
for _ in $(seq 1 600); do
  "$PG_BIN/pg_isready" -q -h "$srv" -p "$port" && "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port" && break
  kill -0 "$pg_pid" 2>/dev/null || die "PostgreSQL exited while starting: $(tail -n 5 "$work/postgres.out")"
  sleep 0.1
done
export PGPASSFILE="$work/pgpass"
"$PG_BIN/pgbench" -i -s 1 -q -h "$srv" -p "$port" -U bench postgres >"$work/pgbench-init.out" 2>&1 ||
  die "pgbench -i failed: $(tail -n 5 "$work/pgbench-init.out")"
# A quiet server: its tables analyzed and flushed now, and no autovacuum
# later, so that the CPU it spends while measured is the lookups'.
"$PG_BIN/psql" -q -h "$srv" -p "$port" -U bench -d postgres -c "VACUUM ANALYZE" -c CHECKPOINT >"$work/vacuum.out" 2>&1 ||
  die "VACUUM failed: $(tail -n 5 "$work/vacuum.out")"

# server_ticks: CPU clock ticks of the postmaster's process tree, with its
# reaped children's (utime, stime, cutime, cstime of the postmaster;
# utime + stime of every live process under it).
server_ticks() {
  local total=0 p f
  read -r -a f < <(sed 's/^.*) //' "/proc/$pg_pid/stat")
  total=$((f[11] + f[12] + f[13] + f[14]))
  for p in $(pgrep -P "$pg_pid"); do
    read -r -a f < <(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
    total=$((total + f[11] + f[12]))
  done
  echo "$total"
}

# pgbench_path PATH ROUND: pgbench at the rate over PATH; prints its
# latency average (ms), schedule lag average (ms), tps, and the server's
# CPU per transaction (µs) as a tab-separated line.
pgbench_path() {
  local where=(-h 127.0.0.1) out="$work/pgbench-$1-$2.out" t0 t1 n hz
  [ "$1" = tcp ] || where=(-h "$srv")
  t0=$(server_ticks)
  taskset -c "$CLIENT_CPU" "$PG_BIN/pgbench" -n -S -M prepared -c "$CLIENTS" -j 2 -R "$RATE" -T "$DURATION" \
    "${where[@]}" -p "$port" -U bench postgres >"$out" 2>&1 || die "pgbench over $1 failed: $(tail -n 5 "$out")"
  sleep 0.5 # the backends' exit, reaped into the postmaster's cutime
  t1=$(server_ticks)
  hz=$(getconf CLK_TCK)
  n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
  [ -n "$n" ] && [ "$n" -gt 0 ] || die "no transactions in pgbench's output over $1: $(tail -n 5 "$out")"
  printf '%s\t%s\t%s\t%s\n' \
    "$(sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p' "$out")" \
    "$(sed -n 's/^rate limit schedule lag: avg \([0-9.]*\) (max .*$/\1/p' "$out")" \
    "$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$out")" \
    "$(awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$n" 'BEGIN { printf "%.2f", d / hz * 1e6 / n }')"
}

pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", (a / b - 1) * 100 }'; }
: >"$work/results.tsv"
for r in $(seq 1 "$ROUNDS"); do
  # The paths' order alternates from round to round.
  if [ $((r % 2)) = 1 ]; then
    IFS=$'\t' read -r lat_tcp lag_tcp tps_tcp cpu_tcp < <(pgbench_path tcp "$r")
    IFS=$'\t' read -r lat_unix lag_unix tps_unix cpu_unix < <(pgbench_path unix "$r")
  else
    IFS=$'\t' read -r lat_unix lag_unix tps_unix cpu_unix < <(pgbench_path unix "$r")
    IFS=$'\t' read -r lat_tcp lag_tcp tps_tcp cpu_tcp < <(pgbench_path tcp "$r")
  fi
  echo "load-anchor: round $r: dbsock run postgres --concurrency $CLIENTS --rate $RATE --clients $STACKS" >&2
  "$work/dbsock" run postgres --provider external --paths tcp,unix --concurrency "$CLIENTS" --rate "$RATE" --clients "$STACKS" \
    --client-cpu "$CLIENT_CPU" --server-pid "postgres=$pg_pid" --instances "$INSTANCES" \
    --postgres-addr "127.0.0.1:$port" --postgres-socket-dir "$srv" --postgres-user bench --postgres-db postgres \
    --postgres-password-file "$work/postgres.pw" -q --format json -o "$work/dbsock-$r.json" 2>"$work/dbsock-$r.out" ||
    die "dbsock run failed: $(tail -n 5 "$work/dbsock-$r.out")"
  cap_tool=$(awk -v a="$cpu_tcp" -v b="$cpu_unix" 'BEGIN { printf "%.3f", a / b }')
  echo
  echo "round $r, $CLIENTS clients at $RATE/s, clients on CPU $CLIENT_CPU, PostgreSQL on CPU $SERVER_CPU:"
  echo "  pgbench: tcp latency avg $lat_tcp ms, lag avg $lag_tcp ms, $tps_tcp tps; unix $lat_unix ms, lag $lag_unix ms, $tps_unix tps"
  echo "  server CPU per transaction under pgbench (/proc): tcp $cpu_tcp µs, unix $cpu_unix µs: TCP/Unix $cap_tool"
  for stack in ${STACKS//,/ }; do
    read -r d_lat_tcp d_lat_unix d_lag_tcp d_lag_unix d_cap d_behind d_lib d_woke < <(jq -r --arg st "$stack" '
      [.summary[] | select((.stack // "") as $x | $x == $st or ($x == "" and $st == "go"))][0] as $s |
      def side($p): ($s.sides[] | select(.path == $p));
      [side("tcp").latency_ns.mean / 1e6, side("unix").latency_ns.mean / 1e6,
       side("tcp").generator.lag_mean_ns / 1e6, side("unix").generator.lag_mean_ns / 1e6,
       ($s.comparisons[] | select(.path == "unix") | .capacity.ratio),
       ([side("tcp"), side("unix")] | map(.generator.fell_behind) | any),
       (($s.client.library // "") + "_" + ($s.client.library_version // "")),
       ([$s.warnings[]? | select(startswith("The Unix socket woke this client"))] | length > 0)] | @tsv' "$work/dbsock-$r.json")
    printf '%s\t' "$stack" "$r" "$lat_tcp" "$lag_tcp" "$lat_unix" "$lag_unix" "$cap_tool" \
      "$d_lat_tcp" "$d_lag_tcp" "$d_lat_unix" "$d_lag_unix" "$d_cap" "$d_behind" >>"$work/results.tsv"
    printf '%s\t%s\n' "$d_lib" "$d_woke" >>"$work/results.tsv"
    echo "  dbsock from $stack (${d_lib//_/ }): tcp mean from due $(printf '%.3f' "$d_lat_tcp") ms, lag $(printf '%.3f' "$d_lag_tcp") ms;" \
      "unix $(printf '%.3f' "$d_lat_unix") ms, lag $(printf '%.3f' "$d_lag_unix") ms; capacity gain $(printf "%.3f" "$d_cap"); fell behind: $d_behind"
  done
done
[ -z "$OUT" ] || cp "$work/results.tsv" "$OUT"/

# The verdict, per stack, on the medians over the rounds (one round whose
# window this machine ruined does not decide alone):
#   lag       dbsock's mean schedule lag no larger than pgbench's, per path;
#   mean      pgbench's "latency average", throttled, runs from the
#             scheduled start, so it holds pgbench's own lag: a generator
#             that keeps its schedule better is lower by the difference
#             and not wrong. The means are compared as given and, the
#             check, net of each generator's lag (latency - lag: the
#             route's, the library's and the server's part), within
#             TOLERANCE_LAT percent, per path;
#   ratio     the TCP/Unix ratio of those means, dbsock's against
#             pgbench's, within TOLERANCE_LAT percent (net of lag too);
#   capacity  dbsock's capacity gain against pgbench's /proc ratio,
#             within TOLERANCE_CAP percent; or lower, with dbsock's report
#             saying why in most rounds: its client was woken more often
#             over the socket than over TCP (the warning "The Unix socket
#             woke this client more often than TCP", docs/method.md),
#             which pgbench's is not.
judge "$work/results.tsv"
exit $?
