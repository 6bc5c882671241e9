#!/bin/bash
# dbsock/postgres's entrypoint: PostgreSQL from Debian's packages, started
# the way the official postgres image starts it, so that what dbsock passes
# to postgres:16 meets the same steps here:
#   - a first argument that is a flag means "postgres FLAGS";
#   - POSTGRES_PASSWORD, POSTGRES_USER (default postgres), POSTGRES_DB
#     (default the user), POSTGRES_INITDB_ARGS, POSTGRES_HOST_AUTH_METHOD,
#     and VAR_FILE for each, are read;
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

from_env() { # from_env VAR [DEFAULT]: VAR, or the contents of VAR_FILE
  local var=$1 file=${1}_FILE def=${2:-}
  if [ -n "${!var:-}" ] && [ -n "${!file:-}" ]; then
    echo "error: both $var and $file are set (but are exclusive)" >&2
    exit 1
  fi
  local val=$def
  if [ -n "${!var:-}" ]; then val=${!var}; elif [ -n "${!file:-}" ]; then val=$(<"${!file}"); fi
  export "$var"="$val"
  unset "$file"
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

from_env POSTGRES_PASSWORD
from_env POSTGRES_USER postgres
from_env POSTGRES_DB "$POSTGRES_USER"
from_env POSTGRES_INITDB_ARGS
: "${POSTGRES_HOST_AUTH_METHOD:=}"

mkdir -p "$PGDATA"
chmod 00700 "$PGDATA" || :
mkdir -p /var/run/postgresql || :
chmod 03775 /var/run/postgresql || :
if [ "$(id -u)" = 0 ]; then
  find "$PGDATA" /var/run/postgresql \! -user postgres -exec chown postgres '{}' +
  exec gosu postgres "$BASH_SOURCE" "$@"
fi

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

export PGPASSWORD=$POSTGRES_PASSWORD
# The temporary server: the given flags, then no TCP and the default port,
# reached on the default socket directory.
PGUSER=$POSTGRES_USER pg_ctl -D "$PGDATA" -o "$(printf '%q ' "$@" -c listen_addresses='' -p 5432)" -w start
sql() { PGHOST= PGHOSTADDR= psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc --dbname postgres "$@"; }
if [ -z "$(sql --set db="$POSTGRES_DB" --tuples-only <<<"SELECT 1 FROM pg_database WHERE datname = :'db';")" ]; then
  sql --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
fi
PGUSER=$POSTGRES_USER pg_ctl -D "$PGDATA" -m fast -w stop
unset PGPASSWORD
echo "PostgreSQL init process complete; ready for start up."
exec postgres "$@"
