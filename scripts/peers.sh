#!/usr/bin/env bash
# Peers like for like, run by hand, alone on a quiet machine (nothing else
# should run meanwhile; about ten minutes at the defaults): do the
# TCP/Unix speedups of dbsock's C client stack agree with those of the C
# tools the field quotes, on the same servers with the same placement?
# With STACK=ruby or STACK=java, the same question of dbsock's Ruby or Java
# stack and a plain program of the same library (scripts/peers/peer.rb,
# scripts/peers/Peer.java), one connection (see STACK below).
#
# It starts its own throwaway Redis, MariaDB and PostgreSQL in a private
# temporary directory (mode 0700, with their Unix sockets; as root they run
# as SERVER_USER, default nobody), on 127.0.0.1 at free ports, each pinned
# with taskset to CPU, the CPU every client runs on too, and stops and
# removes them on exit, on error and on Ctrl-C. Then ROUNDS times, for each
# target in turn (dbsock first in odd rounds, the tool first in even ones):
#   dbsock run TARGET --provider external --clients go,c[:MODEL] --paths tcp,unix
#     --client-cpu CPU --n N --instances INSTANCES  (uniform keys, 10,000 rows)
#   and the field's tool, CONNS connections in a closed loop (one client on
#   one connection at the default), PEER_N ops over TCP and then PEER_N
#   over the socket:
#     redis     redis-benchmark -t get -r 10000 -c CONNS -P 1 (and --threads
#               REDIS_THREADS when over 1; see below): GET of keys
#               key:0..9999, which the script sets first (6-byte values, as
#               dbsock's);
#     postgres  pgbench -S -M prepared -c CONNS -j min(CONNS,2) on its own
#               table at scale 1: 100,000 rows, not 10,000 (abalance, an
#               integer);
#     mysql     sysbench oltp_point_select --rand-type=uniform
#               --table-size=10000 --threads=CONNS (column c: 120 bytes).
#   With CONNS over 1, dbsock runs with --concurrency CONNS (closed loop,
#   a goroutine per connection for Go; for C the worker model MODEL:
#   threads, a thread per connection, its default, or eventloop, one event
#   loop driving every connection, as redis-benchmark's does, which runs
#   hiredis and libpq: TARGETS is then "redis postgres").
# It prints a table per target: each round's tool TCP/Unix ratio (its ops/s
# over the socket over its ops/s over TCP: with one connection, the ratio
# of mean latencies), dbsock's from its C and its Go stack (one connection:
# speedup_mean of the unix comparison; CONNS over 1: the sides' ops_per_sec,
# Unix over TCP, the throughput ratio the tools give), and the gap between
# C and the tool, OK within TOLERANCE percent. Do not run it while others
# use the machine: the numbers mean nothing then.
#
# SERVER_CPU (default CPU) pins the servers apart from the clients: with
# CPU=0 SERVER_CPU=1 every client (dbsock's stacks and the tools) runs on
# CPU 0 and every server on CPU 1, the placement dbsock calls split
# (SERVER_CPU=CPU, the default, is shared).
# STACK (default c): ruby or java measures that stack (--clients go,STACK)
# against scripts/peers/peer.rb or scripts/peers/Peer.java (the Java
# stack's flags: serial GC, C1 only), run once per round and path with
# --rounds 1 --n PEER_N on rows of their own: the tool's figures are their
# means; CONNS must be 1, and TARGETS defaults to "redis postgres mysql"
# for ruby, "postgres mysql" for java (Debian packages no Java Redis
# client).
# Settings (environment): CPU=0, SERVER_CPU=CPU, ROUNDS=3, CONNS=1, STACK=c, MODEL=threads, REDIS_THREADS=1,
# N=3000 (dbsock's --n),
# INSTANCES=9 (dbsock's --instances: on servers it did not start, fresh
# connections), PEER_N=N*INSTANCES (the tool's ops per path: as many as
# dbsock times per path), TARGETS="redis postgres mysql" ("redis postgres"
# with MODEL=eventloop), TOLERANCE=10,
# SERVER_USER=nobody (as root only), OUT=DIR (also keep dbsock's JSON
# reports, the tools' outputs and the table's figures there). A smoke test:
# N=2000 ROUNDS=1.
# Exit status: 0 when each target's median gap (over ROUNDS) is within TOLERANCE, 1 when one is over it
# (or a step failed), 2 on a bad setting (before anything starts).
#
# Passwords: each server gets new random ones; none is printed, none is put
# in the environment, and only one in a command line:
#   dbsock reads each server's from a 0600 file (--TARGET-password-file);
#   pgbench reads its from a 0600 password file (PGPASSFILE holds the
#     file's name, not the password);
#   sysbench reads its from a 0600 file of options (--config-file);
#   redis-benchmark (Redis 7.0) takes a password only on its command line
#     (-a, or in a -u URI): it logs in as an account "peer" of its own on
#     the throwaway Redis, with a one-off random password, allowed only GET,
#     SET, PING and ECHO on keys key:*. Anyone on the machine can read that
#     password in the process list while redis-benchmark runs.
# The servers' files hold only what they need: Redis's ACL has the SHA-256
# of its passwords; MariaDB's setup SQL and PostgreSQL's initdb password
# file are deleted once the data directories are made.
#
# Needs jq, taskset, redis-server and redis-tools, mariadb-server,
# postgresql and sysbench (sudo scripts/install-deps.sh --with-peers), the
# C stack (sudo scripts/install-deps.sh --with-stacks) and Go.
set -euo pipefail
cd "$(dirname "$0")/.."

CPU="${CPU:-0}"
SERVER_CPU="${SERVER_CPU:-$CPU}"
ROUNDS="${ROUNDS:-3}"
CONNS="${CONNS:-1}"
# MODEL: the C stack's worker model at load (--clients c:MODEL).
MODEL="${MODEL:-threads}"
STACK="${STACK:-c}"
# redis-benchmark's threads: with one (the default, the field's usual
# command) it multiplexes its connections in one event loop; with
# REDIS_THREADS=CONNS it runs a thread per connection (--threads), the
# worker model of dbsock's C stack at load. The event loop pays no
# context switch per op, and its Unix/TCP throughput ratio is the higher
# (with CONNS=10 on a 2-vCPU AMD EPYC: 1.66, the C stack 1.41 to 1.47; on
# a 2-vCPU Intel Xeon, medians: 1.50 with one thread (15 rounds),
# 1.42 with ten (5 rounds), the C stack 1.35 to 1.36).
# With --threads, redis-benchmark 7.0's run time comes in steps of 250 ms
# (seen on a 2-vCPU Intel Xeon: 90,000 GETs took 1.00, 1.25, 1.50 or
# 1.75 s by its count, so its ops/s were off by up to 25%), so REDIS_N,
# its requests per path, is then at least 1,000,000 (some 12 s or more: a
# step is 2% or less); with one thread it is PEER_N.
REDIS_THREADS="${REDIS_THREADS:-1}"
N="${N:-3000}"
INSTANCES="${INSTANCES:-9}"
if [ "$MODEL" = eventloop ] || [ "$STACK" = java ]; then TARGETS="${TARGETS:-$([ "$STACK" = java ] && echo postgres mysql || echo redis postgres)}"; else TARGETS="${TARGETS:-redis postgres mysql}"; fi
TOLERANCE="${TOLERANCE:-10}"
SERVER_USER="${SERVER_USER:-nobody}"
OUT="${OUT:-}"
ROWS=10000 # keys the ops read (pgbench: its scale 1, 100,000)
PG_BIN=""  # PostgreSQL's programs (check_tools finds them)
JAVA=/usr/lib/jvm/java-17-openjdk-$(dpkg --print-architecture 2>/dev/null || echo amd64)/bin/java
JARS=/usr/share/java/postgresql.jar:/usr/share/java/mariadb-java-client.jar:/usr/share/java/jna.jar:/usr/share/java/junixsocket-common.jar
# CLIENT, LANG_: the stack dbsock's report is read for (its --clients, its language).
if [ "$STACK" = c ]; then CLIENT="c:$MODEL"; else CLIENT="$STACK"; fi
LANG_="$STACK"

# bad SETTING WHY: exit 2 with one line, before anything starts.
bad() { echo "peers: $1: $2" >&2; exit 2; }
# die WHAT: a step failed (or was interrupted: a command that died of
# Ctrl-C's SIGINT exits 130, and so does the script then).
die() {
  local rc=$?
  if [ "$rc" = 130 ]; then echo "peers: interrupted" >&2; exit 130; fi
  echo "peers: $*" >&2
  exit 1
}

# check_settings: every setting is valid, or exit 2.
check_settings() {
  local v
  for v in ROUNDS CONNS REDIS_THREADS N INSTANCES; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || bad "$v=${!v}" "want a whole number of 1 or more"
  done
  PEER_N="${PEER_N:-$((N * INSTANCES))}"
  [[ "$PEER_N" =~ ^[1-9][0-9]*$ ]] || bad "PEER_N=$PEER_N" "want a whole number of 1 or more"
  REDIS_N="$PEER_N"
  if [ "$REDIS_THREADS" != 1 ] && [ "$REDIS_N" -lt 1000000 ]; then REDIS_N=1000000; fi
  [[ "$CPU" =~ ^[0-9]+$ ]] || bad "CPU=$CPU" "want one CPU number, such as 0"
  taskset -c "$CPU" true 2>/dev/null || bad "CPU=$CPU" "taskset cannot pin to it (this machine's CPUs: $(taskset -pc $$ | sed 's/.*: //'))"
  [[ "$SERVER_CPU" =~ ^[0-9]+$ ]] || bad "SERVER_CPU=$SERVER_CPU" "want one CPU number, such as 1"
  taskset -c "$SERVER_CPU" true 2>/dev/null || bad "SERVER_CPU=$SERVER_CPU" "taskset cannot pin to it (this machine's CPUs: $(taskset -pc $$ | sed 's/.*: //'))"
  [[ "$TOLERANCE" =~ ^[0-9]+([.][0-9]+)?$ ]] || bad "TOLERANCE=$TOLERANCE" "want a percentage, such as 10"
  [ -n "$TARGETS" ] || bad "TARGETS" "empty; want some of: redis postgres mysql"
  for v in $TARGETS; do
    case "$v" in redis | postgres | mysql) ;; *) bad "TARGETS=$TARGETS" "$v is none of: redis postgres mysql" ;; esac
  done
  case "$MODEL" in threads | eventloop) ;; *) bad "MODEL=$MODEL" "want threads or eventloop, the C stack's worker models" ;; esac
  case "$STACK" in c) ;; ruby | java) [ "$CONNS" = 1 ] || bad "STACK=$STACK" "its peer program times one connection: leave CONNS at 1" ;;
    *) bad "STACK=$STACK" "want c, ruby or java" ;; esac
  if [ "$STACK" = java ] && [[ " $TARGETS " == *" redis "* ]]; then
    bad "STACK=java" "Debian packages no Java Redis client: leave redis out of TARGETS"
  fi
  if [ "$MODEL" = eventloop ] && [[ " $TARGETS " == *" mysql "* ]]; then
    bad "MODEL=eventloop" "the C stack's event loop drives hiredis and libpq, not libmariadb: leave mysql out of TARGETS"
  fi
  if [ -n "$OUT" ] && ! mkdir -p "$OUT" 2>/dev/null; then
    bad "OUT=$OUT" "cannot make this directory"
  fi
  if [ "$(id -u)" -eq 0 ]; then
    id -u "$SERVER_USER" >/dev/null 2>&1 || bad "SERVER_USER=$SERVER_USER" "no such user; the servers run as it when this script runs as root"
  fi
}

# pg_bin: PostgreSQL's newest versioned bin directory (Debian), else the
# directory of initdb on PATH.
pg_bin() {
  local d
  d=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1)
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then
    echo "$d"
  elif command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
  fi
}

# check_tools: every program the chosen targets need is here, else say
# which command installs it.
check_tools() {
  local missing=() t
  command -v jq >/dev/null 2>&1 || missing+=(jq)
  command -v ss >/dev/null 2>&1 || missing+=("ss (iproute2)")
  command -v go >/dev/null 2>&1 || die "go is missing: dbsock is built from this tree (install Go 1.26 or later)"
  for t in $TARGETS; do
    case "$t" in
      redis) for b in redis-server redis-cli $([ "$STACK" = c ] && echo redis-benchmark); do command -v "$b" >/dev/null 2>&1 || missing+=("$b"); done ;;
      mysql)
        for b in mariadbd mariadb-install-db $([ "$STACK" = c ] && echo sysbench); do
          command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || missing+=("$b")
        done
        ;;
      postgres)
        PG_BIN=$(pg_bin)
        for b in initdb postgres pg_isready pgbench; do [ -n "$PG_BIN" ] && [ -x "$PG_BIN/$b" ] || missing+=("$b"); done
        ;;
    esac
  done
  if [ ${#missing[@]} -gt 0 ]; then
    die "missing: ${missing[*]}; run: sudo scripts/install-deps.sh --with-peers"
  fi
  if [ "$STACK" = ruby ]; then command -v ruby >/dev/null 2>&1 || die "ruby is missing; run: sudo scripts/install-deps.sh --with-stacks"; fi
  if [ "$STACK" = java ] && ! [ -x "$JAVA" ]; then die "$JAVA is missing; run: sudo scripts/install-deps.sh --with-stacks"; fi
  if [ ! -f agents/.stacks/complete ] || [ ! -x agents/c/dbsock-agent ]; then
    die "dbsock's C stack is not built here (agents/.stacks/complete, agents/c/dbsock-agent); run: sudo scripts/install-deps.sh --with-stacks"
  fi
}

check_settings
check_tools
PATH="$PATH:/usr/sbin"

# The private directories, the servers, and their removal on exit.
# shellcheck source=scripts/peers/servers.sh
. scripts/peers/servers.sh

# ---- one measurement each -----------------------------------------------

# run_dbsock T ROUND: dbsock run T from its Go and C stacks (the C stack in
# worker model MODEL) on the server started above; its JSON report to
# $work/T-ROUND.json.
run_dbsock() {
  local t="$1" r="$2" flags=()
  case "$t" in
    redis) flags=(--redis-addr "127.0.0.1:$REDIS_PORT" --redis-socket "$REDIS_SOCK" --redis-password-file "$work/redis.pw") ;;
    mysql) flags=(--mysql-addr "127.0.0.1:$MYSQL_PORT" --mysql-socket "$MYSQL_SOCK" --mysql-user bench
      --mysql-db dbsock --mysql-password-file "$work/mysql.pw") ;;
    postgres) flags=(--postgres-addr "127.0.0.1:$PG_PORT" --postgres-socket-dir "$PG_SOCKDIR" --postgres-user bench
      --postgres-db postgres --postgres-password-file "$work/postgres.pw") ;;
  esac
  if ! "$work/dbsock" run "$t" --provider external --clients "go,$CLIENT" --paths tcp,unix --client-cpu "$CPU" \
    --concurrency "$CONNS" --server-pid "$t=${pids[$t]}" --n "$N" --instances "$INSTANCES" --rows "$ROWS" --keys uniform \
    -q --format json -o "$work/$t-$r.json" "${flags[@]}" 2>"$work/$t-$r.err"; then
    die "dbsock run $t failed (round $r):
$(tail -n 20 "$work/$t-$r.err")"
  fi
}

# run_tool T ROUND PATH: the field's tool for T, pinned to CPU, PEER_N ops
# over PATH (tcp or unix); prints its ops/s.
run_tool() {
  local t="$1" path="$3" out="$work/$1-$2-tool-$3.out" ops=""
  local where=() rb_threads=()
  [ "$REDIS_THREADS" = 1 ] || rb_threads=(--threads "$REDIS_THREADS")
  case "$t" in
    redis)
      if [ "$path" = tcp ]; then where=(-h 127.0.0.1 -p "$REDIS_PORT"); else where=(-s "$REDIS_SOCK"); fi
      # -a: redis-benchmark has no other way to take a password (see the header).
      taskset -c "$CPU" redis-benchmark "${where[@]}" --user peer -a "$PEER_REDIS_PW" -c "$CONNS" -P 1 \
        "${rb_threads[@]}" -n "$REDIS_N" \
        -r "$ROWS" -t get --csv >"$out" 2>&1 || die "redis-benchmark over $path failed: $(tail -n 5 "$out")"
      ops=$(awk -F'"' '$2 == "GET" { print $4 }' "$out")
      ;;
    postgres)
      if [ "$path" = tcp ]; then where=(-h 127.0.0.1); else where=(-h "$PG_SOCKDIR"); fi
      PGPASSFILE="$work/pgpass" taskset -c "$CPU" "$PG_BIN/pgbench" -n -S -M prepared -c "$CONNS" -j "$((CONNS < 2 ? CONNS : 2))" \
        -t "$(((PEER_N + CONNS - 1) / CONNS))" \
        "${where[@]}" -p "$PG_PORT" -U bench postgres >"$out" 2>&1 || die "pgbench over $path failed: $(tail -n 5 "$out")"
      ops=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$out")
      ;;
    mysql)
      if [ "$path" = tcp ]; then where=(--mysql-host=127.0.0.1 --mysql-port="$MYSQL_PORT"); else where=(--mysql-socket="$MYSQL_SOCK"); fi
      taskset -c "$CPU" sysbench --config-file="$work/sysbench.cfg" oltp_point_select "${where[@]}" --tables=1 \
        --table-size="$ROWS" --threads="$CONNS" --rand-type=uniform --events="$PEER_N" --time=0 run >"$out" 2>&1 ||
        die "sysbench over $path failed: $(tail -n 5 "$out")"
      ops=$(sed -n 's/^ *queries: *[0-9]* *(\([0-9.]*\) per sec\.)$/\1/p' "$out")
      ;;
  esac
  [ -n "$ops" ] || die "no ops/s in the output of $t's tool over $path: $(tail -n 5 "$out")"
  echo "$ops"
}

# run_peer T ROUND: STACK's plain program of the same library (peer.rb,
# Peer.java) on T, pinned to CPU, PEER_N ops over TCP and then over the
# socket, one connection; prints its ops/s over each (1e6 over its means).
run_peer() {
  local t="$1" out="$work/$1-$2-tool-peer.out" sock where=() prog=()
  case "$t" in
    redis) where=(--tcp "127.0.0.1:$REDIS_PORT" --unix "$REDIS_SOCK" --password-file "$work/redis.pw") ;;
    postgres) where=(--tcp "127.0.0.1:$PG_PORT" --unix "$PG_SOCKDIR/.s.PGSQL.$PG_PORT" --user bench --database postgres
      --password-file "$work/postgres.pw") ;;
    mysql) where=(--tcp "127.0.0.1:$MYSQL_PORT" --unix "$MYSQL_SOCK" --user bench --database dbsock --password-file "$work/mysql.pw") ;;
  esac
  if [ "$STACK" = ruby ]; then prog=(ruby scripts/peers/peer.rb); else
    prog=("$JAVA" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$JARS" scripts/peers/Peer.java)
  fi
  taskset -c "$CPU" "${prog[@]}" "$t" "${where[@]}" --n "$PEER_N" --rounds 1 >"$out" 2>&1 ||
    die "${prog[*]:0:2} on $t failed: $(tail -n 5 "$out")"
  sed -n 's/^round 1: tcp mean \([0-9.]*\) µs p50 [0-9.]* µs, unix mean \([0-9.]*\) µs.*/\1 \2/p' "$out" |
    awk '{ printf "%.1f %.1f\n", 1e6 / $1, 1e6 / $2 }'
}

# dbsock_figures T ROUND: from dbsock's report, the C stack's TCP and Unix
# mean (us; with CONNS over 1, 1e6 over its ops/s, as the tool's columns)
# and its ratio, and the Go stack's ratio: speedup_mean with one
# connection, the sides' ops_per_sec Unix/TCP with CONNS over 1.
dbsock_figures() {
  jq -r --argjson conns "$CONNS" --arg lang "$LANG_" '
    def case($l): [.summary[] | select((.client.language // "go") == $l)] | first;
    def side($c; $p): ($c.sides[] | select(.path == $p));
    def mean($c; $p): (side($c; $p) | if $conns > 1 then 1e6 / .ops_per_sec else .latency_ns.mean / 1000 end);
    def speedup($c): if $conns > 1 then side($c; "unix").ops_per_sec / side($c; "tcp").ops_per_sec
      else ($c.comparisons[] | select(.path == "unix") | .speedup_mean) end;
    case($lang) as $c | case("go") as $g |
    if $c == null or $g == null then error("no \($lang) or go case in the report") else
    [mean($c; "tcp"), mean($c; "unix"), speedup($c), speedup($g)] | @tsv end' "$work/$1-$2.json" ||
    die "could not read the $LANG_ and Go stacks' figures from dbsock's report of $1 (round $2)"
}

# measure T ROUND: dbsock and the tool on T, in the round's order; appends
# a line to $work/results.tsv.
measure() {
  local t="$1" r="$2" tcp unix figures start
  start=$SECONDS
  if ((r % 2 == 1)); then run_dbsock "$t" "$r"; fi
  if [ "$STACK" = c ]; then
    tcp=$(run_tool "$t" "$r" tcp)
    unix=$(run_tool "$t" "$r" unix)
  else
    read -r tcp unix < <(run_peer "$t" "$r") || die "$STACK's peer program on $t gave no figures (round $r)"
  fi
  if ((r % 2 == 0)); then run_dbsock "$t" "$r"; fi
  figures=$(dbsock_figures "$t" "$r")
  printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$r" "$tcp" "$unix" "$figures" >>"$work/results.tsv"
  echo "round $r/$ROUNDS: $t done ($((SECONDS - start)) s)"
}

# ---- the table ------------------------------------------------------------

# tool_name T: the tool and its workload, for the table's title.
tool_name() {
  case "$STACK" in
    ruby) echo "scripts/peers/peer.rb $1 --n $PEER_N --rounds 1 (its default library, its own 10,000 rows)"; return ;;
    java) echo "scripts/peers/Peer.java $1 --n $PEER_N --rounds 1 (serial GC, C1 only; its own 10,000 rows)"; return ;;
  esac
  case "$1" in
    redis) echo "redis-benchmark -t get -r $ROWS -c $CONNS -P 1$([ "$REDIS_THREADS" = 1 ] || echo " --threads $REDIS_THREADS") (-n $REDIS_N)" ;;
    postgres) echo "pgbench -S -M prepared -c $CONNS -j $((CONNS < 2 ? CONNS : 2)) (-t $(((PEER_N + CONNS - 1) / CONNS)) each, scale 1: 100,000 rows)" ;;
    mysql) echo "sysbench oltp_point_select --rand-type=uniform --table-size=$ROWS --threads=$CONNS (--events $PEER_N)" ;;
  esac
}

# report: a table per target from $work/results.tsv, a row per round and
# the median of the rounds' ratios; exits 1 when the medians' gap is over
# TOLERANCE (one noisy round does not decide).
report() {
  local t over=0
  echo
  if [ "$CONNS" = 1 ]; then
    echo "Peers like for like: TCP/Unix ratio of mean latency, one connection, clients on CPU $CPU, servers on CPU $SERVER_CPU"
    echo "(dbsock: speedup_mean of dbsock run TARGET --clients go,$CLIENT --n $N --instances $INSTANCES; $LANG_ vs tool: ($LANG_ - tool) / tool)"
  else
    echo "Peers like for like: Unix/TCP ratio of throughput, $CONNS connections in a closed loop, clients on CPU $CPU, servers on CPU $SERVER_CPU"
    echo "(dbsock: ops_per_sec Unix/TCP of dbsock run TARGET --clients go,$CLIENT --concurrency $CONNS --n $N --instances $INSTANCES; $LANG_ vs tool: ($LANG_ - tool) / tool)"
    echo "(the us columns are 1e6 over each side's ops/s: the time per op of all $CONNS connections together)"
  fi
  for t in $TARGETS; do
    echo
    echo "== $t: $(tool_name "$t")"
    awk -F'\t' -v t="$t" -v tol="$TOLERANCE" -v l="$LANG_" '
      BEGIN { printf "%-6s %12s %12s %10s %10s %10s %10s %10s  %s\n", "round", "tool tcp us", "tool unix us", "tool", l " tcp us", l " unix us", "dbsock " l, "dbsock Go", l " vs tool" }
      function median(a, n,   i, j, v) { # insertion sort of a[1..n], then its middle
        for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j > 0 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      $1 == t {
        tool = $4 / $3; gap = ($7 - tool) / tool * 100
        n++; tools[n] = tool; cs[n] = $7; gos[n] = $8
        printf "%-6s %12.1f %12.1f %10.3f %10.1f %10.1f %10.3f %10.3f  %+.1f%%\n", $2, 1e6 / $3, 1e6 / $4, tool, $5, $6, $7, $8, gap
      }
      END {
        if (!n) exit 1
        tool = median(tools, n); c = median(cs, n); gap = (c - tool) / tool * 100; ok = (gap <= tol && gap >= -tol)
        printf "%-6s %12s %12s %10.3f %10s %10s %10.3f %10.3f  %+.1f%% %s\n", "median", "", "", tool, "", "", c, median(gos, n), gap, ok ? "OK" : "OVER " tol "%"
        exit !ok
      }' "$work/results.tsv" || over=1
  done
  echo
  if [ -n "$OUT" ]; then
    cp "$work"/*.json "$work"/*-tool-*.out "$work/results.tsv" "$OUT"/
    echo "peers: dbsock's reports, the tools' outputs and results.tsv are in $OUT"
  fi
  if [ "$over" = 1 ]; then
    echo "peers: a gap between dbsock's $LANG_ stack and its peer tool is over ${TOLERANCE}%"
    exit 1
  fi
  echo "peers: dbsock's $LANG_ stack agrees with every peer tool within ${TOLERANCE}%"
}

# ---- main -------------------------------------------------------------------

echo "peers: building dbsock into $work"
go build -o "$work/dbsock" ./cmd/dbsock
for t in $TARGETS; do "prepare_$t"; done
if [ ${#as_server[@]} -gt 0 ]; then
  chown -R "$SERVER_USER:$(id -g "$SERVER_USER")" "$srv"
fi
for t in $TARGETS; do
  echo "peers: starting $t (pinned to CPU $SERVER_CPU)"
  "start_$t"
done
: >"$work/results.tsv"
for r in $(seq 1 "$ROUNDS"); do
  for t in $TARGETS; do measure "$t" "$r"; done
done
report
