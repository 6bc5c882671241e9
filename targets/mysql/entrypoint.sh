#!/bin/bash
# dbsock/mariadb's entrypoint: MariaDB from Debian's packages, started the
# way the official mysql image starts MySQL, so that what dbsock passes to
# mysql:8.4 meets the same steps here:
#   - a first argument that is a flag means "mysqld FLAGS";
#   - MYSQL_ROOT_PASSWORD (or MYSQL_ALLOW_EMPTY_PASSWORD,
#     MYSQL_RANDOM_ROOT_PASSWORD), MYSQL_ROOT_HOST (default %),
#     MYSQL_DATABASE, MYSQL_USER and MYSQL_PASSWORD, and VAR_FILE for each,
#     are read;
#   - the data directory and the socket's directory, as the server's own
#     configuration and flags give them, are made the mysql user's (uid
#     999), with the pid file's, when run as root, and the script runs again as mysql via gosu;
#   - an empty data directory is initialised, then a temporary server with
#     the given flags, --skip-networking and the socket the flags name sets
#     the root password, drops every other account (MariaDB's installer
#     also makes root@127.0.0.1, root@::1 and anonymous ones; MySQL's
#     makes none), creates the database and the user (user@'%') through
#     the client on that socket, and stops;
#   - the image's default socket (/run/mysqld/mysqld.sock) is linked to the
#     socket in use, and the server runs as the container's first process.
# Written for dbsock from the official image's documented behaviour; it
# covers what dbsock uses (no /docker-entrypoint-initdb.d scripts).
set -Eeo pipefail

note() { echo "$(date -u +%FT%TZ) [Entrypoint]: $*"; }
fail() { echo "$(date -u +%FT%TZ) [Entrypoint]: error: $*" >&2; exit 1; }

# from_env VAR [DEFAULT]: VAR, or the contents of VAR_FILE, kept in this
# shell only: not exported, so that no process started from here (the
# server included) has it in its environment. A copy hand_over made is
# removed once read.
from_env() {
  local var=$1 file=${1}_FILE def=${2:-}
  if [ -n "${!var:-}" ] && [ -n "${!file:-}" ]; then fail "both $var and $file are set (but are exclusive)"; fi
  local val=$def
  if [ -n "${!var:-}" ]; then
    val=${!var}
  elif [ -n "${!file:-}" ]; then
    val=$(<"${!file}")
    case "${!file}" in "$handed"/*) rm -f "${!file}" ;; esac
  fi
  unset "$file" "$var"
  printf -v "$var" '%s' "$val"
}

# hand_over USER VAR...: as root, before switching to USER: each VAR given,
# or the file VAR_FILE names (which may be root's alone, as a file from
# the host often is), is copied into a directory of USER's, VAR_FILE then
# names the copy and VAR is unset: the values cross the switch in files,
# not in the environment every process inherits.
handed=/run/dbsock-entrypoint
hand_over() {
  local user=$1 var file
  shift
  install -d -m 0700 -o "$user" "$handed"
  for var; do
    file=${var}_FILE
    if [ -n "${!var:-}" ] && [ -n "${!file:-}" ]; then fail "both $var and $file are set (but are exclusive)"; fi
    if [ -n "${!file:-}" ]; then
      install -m 0400 -o "$user" "${!file}" "$handed/$var"
    elif [ -n "${!var:-}" ]; then
      (umask 0277 && printf '%s' "${!var}" >"$handed/$var")
      chown "$user" "$handed/$var"
    else
      continue
    fi
    unset "$var"
    export "$file=$handed/$var"
  done
}

# config NAME FLAGS...: the value the server would use for NAME, from its
# configuration files and the flags.
config() {
  local name=$1
  shift
  "$@" --verbose --help 2>/dev/null | awk -v n="$name" '$1 == n && /^[^ \t]/ { sub(/^[^ \t]+[ \t]+/, ""); print; exit }'
}

wants_help() {
  local a
  for a; do
    case "$a" in -'?' | --help | --print-defaults | -V | --version) return 0 ;; esac
  done
  return 1
}

if [ "${1:0:1}" = - ]; then set -- mysqld "$@"; fi
case "$1" in mysqld | mariadbd) ;; *) exec "$@" ;; esac
if wants_help "$@"; then exec "$@"; fi
shift
set -- mariadbd "$@"

DATADIR=$(config datadir "$@")
SOCKET=$(config socket "$@")
[ -n "$DATADIR" ] && [ -n "$SOCKET" ] || fail "mariadbd refused the flags: $("$@" --verbose --help 2>&1 >/dev/null | head -3)"
dirs=("$DATADIR" "$(dirname "$SOCKET")")
pidfile=$(config pid-file "$@")
if [ -n "$pidfile" ]; then dirs+=("$(dirname "$pidfile")"); fi
mkdir -p "${dirs[@]}"
if [ "$(id -u)" = 0 ]; then
  find "${dirs[@]}" \! -user mysql -exec chown --no-dereference mysql '{}' +
  hand_over mysql MYSQL_ROOT_HOST MYSQL_DATABASE MYSQL_USER MYSQL_PASSWORD MYSQL_ROOT_PASSWORD
  note "Switching to dedicated user 'mysql'"
  exec gosu mysql "$BASH_SOURCE" "$@"
fi
from_env MYSQL_ROOT_HOST %
from_env MYSQL_DATABASE
from_env MYSQL_USER
from_env MYSQL_PASSWORD
from_env MYSQL_ROOT_PASSWORD

default_socket=$(config socket mariadbd --no-defaults)
link_default_socket() {
  if [ "$default_socket" != "$SOCKET" ]; then ln -sfT "$SOCKET" "$default_socket" 2>/dev/null || :; fi
}

if [ -d "$DATADIR/mysql" ]; then
  link_default_socket
  exec "$@"
fi

if [ -z "$MYSQL_ROOT_PASSWORD" ] && [ -z "${MYSQL_ALLOW_EMPTY_PASSWORD:-}" ] && [ -z "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
  fail "the database is uninitialized and no password option is given: set MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD or MYSQL_RANDOM_ROOT_PASSWORD"
fi
if [ -n "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
  MYSQL_ROOT_PASSWORD=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
  note "GENERATED ROOT PASSWORD: $MYSQL_ROOT_PASSWORD"
fi

note "Initializing database files"
mariadb-install-db --datadir="$DATADIR" --auth-root-authentication-method=normal --skip-test-db \
  --skip-name-resolve >/tmp/install-db.log 2>&1 ||
  { cat /tmp/install-db.log >&2; fail "mariadb-install-db failed"; }

note "Starting temporary server"
"$@" --skip-networking --default-time-zone=SYSTEM --socket="$SOCKET" &
temp=$!
for _ in $(seq 300); do
  mariadb-admin --no-defaults --socket="$SOCKET" -uroot ping >/dev/null 2>&1 && break
  kill -0 "$temp" 2>/dev/null || fail "the temporary server exited"
  sleep 0.1
done
note "Temporary server started."
link_default_socket

quote() { printf "'%s'" "$(printf %s "$1" | sed "s/\\\\/\\\\\\\\/g; s/'/\\\\'/g")"; }
ident() { printf '`%s`' "$(printf %s "$1" | sed 's/`/``/g')"; }
{
  echo "SET @@SESSION.SQL_LOG_BIN=0;"
  # Only root@localhost stays, as MySQL's own initialisation leaves it.
  echo "DELETE FROM mysql.global_priv WHERE User NOT IN ('mariadb.sys') AND NOT (User = 'root' AND Host = 'localhost');"
  echo "DELETE FROM mysql.proxies_priv WHERE NOT (User = 'root' AND Host = 'localhost');"
  echo "FLUSH PRIVILEGES;"
  echo "ALTER USER 'root'@'localhost' IDENTIFIED BY $(quote "$MYSQL_ROOT_PASSWORD");"
  if [ -n "$MYSQL_ROOT_HOST" ] && [ "$MYSQL_ROOT_HOST" != localhost ]; then
    echo "CREATE USER 'root'@$(quote "$MYSQL_ROOT_HOST") IDENTIFIED BY $(quote "$MYSQL_ROOT_PASSWORD");"
    echo "GRANT ALL ON *.* TO 'root'@$(quote "$MYSQL_ROOT_HOST") WITH GRANT OPTION;"
  fi
  if [ -n "$MYSQL_DATABASE" ]; then
    echo "CREATE DATABASE IF NOT EXISTS $(ident "$MYSQL_DATABASE");"
  fi
  if [ -n "$MYSQL_USER" ] && [ -n "$MYSQL_PASSWORD" ]; then
    echo "CREATE USER $(quote "$MYSQL_USER")@'%' IDENTIFIED BY $(quote "$MYSQL_PASSWORD");"
    if [ -n "$MYSQL_DATABASE" ]; then
      echo "GRANT ALL ON $(ident "$MYSQL_DATABASE").* TO $(quote "$MYSQL_USER")@'%';"
    fi
  fi
} | mariadb --no-defaults --protocol=socket --socket="$SOCKET" -uroot --comments ||
  fail "setting up the accounts on the temporary server failed"

note "Stopping temporary server"
# The password through an option file on a pipe: not in an environment.
mariadb-admin --defaults-file=<(printf '[client]\npassword="%s"\n' "$(printf %s "$MYSQL_ROOT_PASSWORD" | sed 's/[\\"]/\\&/g')") \
  --socket="$SOCKET" -uroot shutdown
wait "$temp" || :
note "Temporary server stopped"
note "MariaDB init process done. Ready for start up."
exec "$@"
