#!/bin/sh
# Starts PostgreSQL the way the official postgres image does, for the subset
# dbsock uses: "postgres" followed by server flags (-c name=value ...); on
# the first start POSTGRES_USER (default postgres), POSTGRES_PASSWORD and
# POSTGRES_DB create the superuser and database. The server runs as the
# postgres user, as it must.
set -eu
case "${1:-}" in postgres) shift ;; esac
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PGDATA=${PGDATA:-/var/lib/postgresql/data}
user=${POSTGRES_USER:-postgres}
mkdir -p "$PGDATA" /var/run/postgresql
chown -R postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pw=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pw"
  chown postgres "$pw"
  setpriv --reuid=postgres --regid=postgres --init-groups "$bin/initdb" -D "$PGDATA" -U "$user" \
    --pwfile="$pw" --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C >/tmp/initdb.log 2>&1 ||
    { cat /tmp/initdb.log >&2; rm -f "$pw"; exit 1; }
  rm -f "$pw"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  db=${POSTGRES_DB:-$user}
  if [ "$db" != postgres ]; then
    setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" --single -D "$PGDATA" postgres \
      <<SQL >/dev/null
CREATE DATABASE "$db";
SQL
  fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$PGDATA" "$@"
