# Sourced by scripts/peers.sh (not run on its own): its private
# directories, the throwaway Redis, MariaDB and PostgreSQL it measures,
# and their removal on every exit. It reads the settings peers.sh checked
# (SERVER_CPU, SERVER_USER, ROWS, PG_BIN) and sets each server's address,
# socket and password files for the measurements.
# shellcheck shell=bash disable=SC2034
# ---- private directories, the servers, and their removal ---------------

# Two private directories (0700), both removed on exit: $work, the
# clients' (dbsock, password files, every log and output), and $srv, the
# servers' (data, configs, sockets). As root, $srv and what is in it
# belong to SERVER_USER, and the script writes nothing there after
# handing it over: the servers' files are written first (prepare_T), the
# servers started afterwards (start_T).
work=$(mktemp -d "${TMPDIR:-/tmp}/peers.XXXXXX")
srv=""
chmod 700 "$work"
declare -A pids=()     # target -> server pid
declare -A stopsig=()  # target -> the signal that stops it quickly
as_server=()           # the command prefix that runs a server as SERVER_USER (as root)

# stop_server T: stop T's server (its quick shutdown), waiting up to 20 s
# before killing it.
stop_server() {
  local t="$1" pid="${pids[$1]}" i
  kill "-${stopsig[$t]}" "$pid" 2>/dev/null || return 0
  for i in $(seq 1 200); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# cleanup: stop every server this script started and remove both
# directories; runs on every exit (errors and Ctrl-C included).
cleanup() {
  local rc=$? t
  trap - EXIT INT TERM
  for t in "${!pids[@]}"; do stop_server "$t"; done
  rm -rf "$work" ${srv:+"$srv"}
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "peers: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

srv=$(mktemp -d "${TMPDIR:-/tmp}/peers-srv.XXXXXX")
chmod 700 "$srv"
if [ "$(id -u)" -eq 0 ]; then
  # PostgreSQL refuses to run as root, and no server here needs it.
  as_server=(setpriv "--reuid=$SERVER_USER" "--regid=$(id -g "$SERVER_USER")" --clear-groups)
fi

# password: a new random password (32 hex digits).
password() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }
# secret FILE VALUE: write VALUE to FILE, readable by its owner only.
secret() { (umask 077 && printf '%s\n' "$2" >"$1"); }
# sha256 VALUE: VALUE's SHA-256 in hex (VALUE on a pipe, not in argv).
sha256() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

declare -A used_ports=()
# free_port: a TCP port nothing listens on at 127.0.0.1, not handed out before.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    [ -z "${used_ports[$p]:-}" ] || continue
    [ -z "$(ss -Htln "sport = :$p")" ] || continue
    used_ports[$p]=1
    echo "$p"
    return
  done
}

# as_srv COMMAND...: run COMMAND as the servers' user (as root), pinned to SERVER_CPU.
as_srv() { taskset -c "$SERVER_CPU" "${as_server[@]}" "$@"; }

# start_server T SIGNAL COMMAND...: start T's server pinned to SERVER_CPU, as
# SERVER_USER, its output to $work/T.log.
start_server() {
  local t="$1"
  stopsig[$t]="$2"
  shift 2
  # Not through as_srv: a function in the background is a subshell, and
  # $! must be the server's own pid (taskset and setpriv exec it).
  taskset -c "$SERVER_CPU" "${as_server[@]}" "$@" >"$work/$t.log" 2>&1 &
  pids[$t]=$!
}

# wait_ready T CHECK...: wait up to 60 s until CHECK succeeds, failing at
# once if T's server exits (with its log's end).
wait_ready() {
  local t="$1" i
  shift
  for i in $(seq 1 600); do
    if ! kill -0 "${pids[$t]}" 2>/dev/null; then
      die "the $t server exited while starting; the end of its log:
$(tail -n 15 "$work/$t.log")"
    fi
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "the $t server did not get ready within 60 s; the end of its log:
$(tail -n 15 "$work/$t.log")"
}

# listening PORT SOCKET: TCP PORT on 127.0.0.1 and Unix SOCKET are served.
listening() { [ -S "$2" ] && [ -n "$(ss -Htln "sport = :$1")" ]; }

# prepare_redis: Redis's config, with two accounts, default (dbsock's, its
# password in $work/redis.pw) and peer (redis-benchmark's: GET, SET, PING
# and ECHO on keys key:*), by their passwords' SHA-256 only.
prepare_redis() {
  local pw
  REDIS_PORT=$(free_port)
  REDIS_SOCK="$srv/redis.sock"
  pw=$(password)
  PEER_REDIS_PW=$(password)
  secret "$work/redis.pw" "$pw"
  mkdir "$srv/redis"
  (umask 077 && cat >"$srv/redis.conf") <<EOF
port $REDIS_PORT
bind 127.0.0.1
unixsocket $REDIS_SOCK
unixsocketperm 700
dir $srv/redis
save ""
appendonly no
user default on #$(sha256 "$pw") ~* &* +@all
user peer on #$(sha256 "$PEER_REDIS_PW") ~key:* resetchannels -@all +get +set +ping +echo
EOF
}

# start_redis: Redis, then keys key:0..9999 for redis-benchmark (6-byte
# values), set over the socket, the password on redis-cli's stdin.
start_redis() {
  local i
  start_server redis TERM redis-server "$srv/redis.conf"
  wait_ready redis listening "$REDIS_PORT" "$REDIS_SOCK"
  # redis-benchmark -r 10000 reads key:__rand_int__, a 12-digit number.
  {
    printf 'AUTH peer %s\r\n' "$PEER_REDIS_PW"
    for ((i = 0; i < ROWS; i++)); do printf 'SET key:%012d xxxxxx\r\n' "$i"; done
  } | redis-cli -s "$REDIS_SOCK" --pipe >"$work/redis-seed.log" 2>&1 ||
    die "could not set redis-benchmark's keys through $REDIS_SOCK: $(tail -n 5 "$work/redis-seed.log")"
}

# prepare_mysql: the SQL that makes MariaDB's one account, bench
# (localhost: the socket; 127.0.0.1: TCP), on databases dbsock and sbtest,
# and drops every other (root included); sysbench's file of options.
prepare_mysql() {
  local pw
  MYSQL_PORT=$(free_port)
  MYSQL_SOCK="$srv/mysql.sock"
  pw=$(password)
  secret "$work/mysql.pw" "$pw"
  (umask 077 && printf 'db-driver=mysql\nmysql-user=bench\nmysql-password=%s\nmysql-db=sbtest\n' "$pw" >"$work/sysbench.cfg")
  mkdir "$srv/mysql"
  # FLUSH PRIVILEGES first: the installer's server starts without its
  # grant tables loaded, and CREATE USER needs them.
  (umask 077 && cat >"$srv/mysql-setup.sql") <<EOF
FLUSH PRIVILEGES;
CREATE DATABASE dbsock;
CREATE DATABASE sbtest;
CREATE USER 'bench'@'localhost' IDENTIFIED BY '$pw';
CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '$pw';
GRANT ALL ON dbsock.* TO 'bench'@'localhost', 'bench'@'127.0.0.1';
GRANT ALL ON sbtest.* TO 'bench'@'localhost', 'bench'@'127.0.0.1';
DELETE FROM mysql.global_priv WHERE User NOT IN ('mariadb.sys', 'bench');
EOF
}

# start_mysql: MariaDB's data directory (the setup SQL deleted once it
# ran), the server, then sysbench's table sbtest1 of 10,000 rows.
start_mysql() {
  local rc=0
  # --force: this host's name need not resolve; the server listens on
  # 127.0.0.1 and its socket only.
  (cd "$srv/mysql" && as_srv mariadb-install-db --no-defaults --datadir="$srv/mysql/data" \
    --auth-root-authentication-method=socket --skip-test-db --skip-name-resolve --force \
    --extra-file="$srv/mysql-setup.sql") >"$work/mysql-install.log" 2>&1 || rc=$?
  rm -f "$srv/mysql-setup.sql"
  [ "$rc" = 0 ] || die "mariadb-install-db failed; its errors:
$(grep -m 10 ERROR "$work/mysql-install.log" || tail -n 15 "$work/mysql-install.log")"
  start_server mysql TERM mariadbd --no-defaults --datadir="$srv/mysql/data" --socket="$MYSQL_SOCK" \
    --port="$MYSQL_PORT" --bind-address=127.0.0.1 --skip-name-resolve --skip-log-bin \
    --pid-file="$srv/mysql/mysqld.pid" --tmpdir="$srv/mysql"
  wait_ready mysql listening "$MYSQL_PORT" "$MYSQL_SOCK"
  sysbench --config-file="$work/sysbench.cfg" oltp_point_select --mysql-socket="$MYSQL_SOCK" \
    --tables=1 --table-size="$ROWS" prepare >"$work/sysbench-prepare.log" 2>&1 ||
    die "sysbench prepare failed: $(tail -n 5 "$work/sysbench-prepare.log")"
}

# prepare_postgres: initdb's password file for PostgreSQL's one
# superuser, bench (scram-sha-256 on both paths), whose password is also in
# $work/postgres.pw (dbsock's) and $work/pgpass (pgbench's).
prepare_postgres() {
  local pw
  PG_PORT=$(free_port)
  PG_SOCKDIR="$srv/pg"
  pw=$(password)
  secret "$work/postgres.pw" "$pw"
  secret "$work/pgpass" "*:*:*:bench:$pw"
  mkdir "$PG_SOCKDIR"
  secret "$srv/pg-initdb.pw" "$pw"
}

# start_postgres: the data directory (initdb's password file deleted once
# it ran), the server, then pgbench's tables at scale 1 in database
# postgres.
start_postgres() {
  local rc=0
  as_srv "$PG_BIN/initdb" -D "$PG_SOCKDIR/data" -U bench --pwfile="$srv/pg-initdb.pw" \
    --auth-local=scram-sha-256 --auth-host=scram-sha-256 --no-sync -E UTF8 --locale=C >"$work/pg-initdb.log" 2>&1 || rc=$?
  rm -f "$srv/pg-initdb.pw"
  [ "$rc" = 0 ] || die "initdb failed; the end of its output:
$(tail -n 15 "$work/pg-initdb.log")"
  # SIGINT is PostgreSQL's fast shutdown.
  start_server postgres INT "$PG_BIN/postgres" -D "$PG_SOCKDIR/data" -c listen_addresses=127.0.0.1 \
    -c port="$PG_PORT" -c unix_socket_directories="$PG_SOCKDIR" -c unix_socket_permissions=0700 -c fsync=off
  wait_ready postgres "$PG_BIN/pg_isready" -q -h "$PG_SOCKDIR" -p "$PG_PORT"
  wait_ready postgres "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"
  PGPASSFILE="$work/pgpass" "$PG_BIN/pgbench" -i -s 1 -q -h "$PG_SOCKDIR" -p "$PG_PORT" -U bench postgres \
    >"$work/pgbench-init.log" 2>&1 || die "pgbench -i failed: $(tail -n 5 "$work/pgbench-init.log")"
}

