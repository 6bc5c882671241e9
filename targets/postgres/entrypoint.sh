#!/bin/bash
# dbsock/postgres's entrypoint: PostgreSQL from Debian's packages, started
# the way the official postgres image starts it, so that what dbsock passes
# to postgres:16 meets the same steps here:
#   - a first argument that is a flag means "postgres FLAGS";
#   - POSTGRES_PASSWORD, POSTGRES_USER (default postgres), POSTGRES_DB
#     (default the user), POSTGRES_INITDB_ARGS, POSTGRES_HOST_AUTH_METHOD,
#     and VAR_FILE for each, are read (as root, a VAR_FILE is copied where
#     the postgres user reads it); no password is left in the environment
#     of the server or of any process the script starts (the temporary
#     server is reached on its socket, where initdb's default trusts
#     local connections, so psql needs no PGPASSWORD);
#   - as root, PGDATA and /var/run/postgresql are made the postgres user's
#     (uid 999), and the script runs again as that user through gosu;
#   - an empty PGDATA is initialised with initdb, "host all all all" gets
#     the server's password_encryption, and a temporary server listening on
#     its socket only (-c listen_addresses='' -p 5432, after the given
#     flags) creates the database through psql on the default socket
#     directory, /var/run/postgresql, with PGHOST emptied; then it stops;
#   - then the server runs with the given flags as the container's first
#     process.
# Written for dbsock from the official image's documented behaviour; it
# covers what dbsock uses (no /docker-entrypoint-initdb.d scripts).
set -Eeo pipefail

# from_env VAR [DEFAULT]: VAR, or the contents of VAR_FILE, kept in this
# shell only: not exported, so that no process started from here (the
# server included) has it in its environment. A copy hand_over made is
# removed once read.
from_env() {
  local var=$1 file=${1}_FILE def=${2:-}
  if [ -n "${!var:-}" ] && [ -n "${!file:-}" ]; then
    echo "error: both $var and $file are set (but are exclusive)" >&2
    exit 1
  fi
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
    if [ -n "${!var:-}" ] && [ -n "${!file:-}" ]; then
      echo "error: both $var and $file are set (but are exclusive)" >&2
      exit 1
    fi
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

wants_help() {
  local a
  for a; do
    case "$a" in -'?' | --help | --describe-config | -V | --version) return 0 ;; esac
  done
  return 1
}

if [ "${1:0:1}" = - ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ] || wants_help "$@"; then exec "$@"; fi

mkdir -p "$PGDATA"
chmod 00700 "$PGDATA" || :
mkdir -p /var/run/postgresql || :
chmod 03775 /var/run/postgresql || :
if [ "$(id -u)" = 0 ]; then
  find "$PGDATA" /var/run/postgresql \! -user postgres -exec chown postgres '{}' +
  hand_over postgres POSTGRES_PASSWORD POSTGRES_USER POSTGRES_DB POSTGRES_INITDB_ARGS
  exec gosu postgres "$BASH_SOURCE" "$@"
fi
from_env POSTGRES_PASSWORD
from_env POSTGRES_USER postgres
from_env POSTGRES_DB "$POSTGRES_USER"
from_env POSTGRES_INITDB_ARGS
: "${POSTGRES_HOST_AUTH_METHOD:=}"

if [ -s "$PGDATA/PG_VERSION" ]; then
  echo "PostgreSQL database directory appears to contain a database; skipping initialization"
  exec "$@"
fi

if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
  echo "error: the database is uninitialized and POSTGRES_PASSWORD is not set" >&2
  exit 1
fi
# shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of flags
initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") $POSTGRES_INITDB_ARGS

shift # "postgres"
auth=$(postgres -C password_encryption "$@")
printf '\nhost all all all %s\n' "${POSTGRES_HOST_AUTH_METHOD:-$auth}" >>"$PGDATA/pg_hba.conf"

# The temporary server: the given flags, then no TCP and the default port,
# reached on the default socket directory.
PGUSER=$POSTGRES_USER pg_ctl -D "$PGDATA" -o "$(printf '%q ' "$@" -c listen_addresses='' -p 5432)" -w start
sql() { PGHOST= PGHOSTADDR= psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc --dbname postgres "$@"; }
if [ -z "$(sql --set db="$POSTGRES_DB" --tuples-only <<<"SELECT 1 FROM pg_database WHERE datname = :'db';")" ]; then
  sql --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
fi
PGUSER=$POSTGRES_USER pg_ctl -D "$PGDATA" -m fast -w stop
echo "PostgreSQL init process complete; ready for start up."
exec postgres "$@"
