#!/bin/sh
# Starts PostgreSQL on its own Unix socket and PgBouncer in front of it
# (transaction pooling), for dbsock's pgbouncer target:
#   pgbouncer --listen ADDR --port PORT --socket-dir DIR [--tls-cert F --tls-key F] [--backend-tcp PGPORT]
# With a certificate and key, PgBouncer serves TLS to the clients that ask.
# With --backend-tcp, PostgreSQL listens on port PGPORT of 127.0.0.1 too
# (the container's own, or the host's on its network: a free port dbsock
# chose), and PgBouncer serves database DB_over_tcp over it: the hop's leg
# on TCP (dbsock's tcp-tcp and unix-tcp paths); every other database it
# reaches over PostgreSQL's socket.
# PGBOUNCER_USER, PGBOUNCER_PASSWORD (or PGBOUNCER_PASSWORD_FILE, a file
# holding it) and PGBOUNCER_DB name the account and database; the account
# is PgBouncer's admin user too (SHOW CLIENTS). The password goes to initdb
# and PgBouncer in files, and is in the environment of neither server.
# Both servers run as the postgres user, as they must.
set -eu
case "${1:-}" in pgbouncer) shift ;; esac
listen=127.0.0.1 port=6432 sockdir=/var/run/postgresql tlscert= tlskey= backendtcp= pgport=5432
while [ $# -gt 0 ]; do
  case "$1" in
    --listen) listen=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --socket-dir) sockdir=$2; shift 2 ;;
    --tls-cert) tlscert=$2; shift 2 ;;
    --tls-key) tlskey=$2; shift 2 ;;
    --backend-tcp) backendtcp=127.0.0.1 pgport=$2; shift 2 ;;
    *) shift ;;
  esac
done
user=${PGBOUNCER_USER:-dbsock} db=${PGBOUNCER_DB:-postgres}
password=${PGBOUNCER_PASSWORD:-}
if [ -n "${PGBOUNCER_PASSWORD_FILE:-}" ]; then
  [ -z "$password" ] || { echo "error: both PGBOUNCER_PASSWORD and PGBOUNCER_PASSWORD_FILE are set (but are exclusive)" >&2; exit 1; }
  password=$(cat "$PGBOUNCER_PASSWORD_FILE")
fi
unset PGBOUNCER_PASSWORD PGBOUNCER_PASSWORD_FILE
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PGDATA=/var/lib/postgresql/data
mkdir -p "$PGDATA" /var/run/postgresql /etc/dbsock
chown -R postgres:postgres "$PGDATA" /var/run/postgresql /etc/dbsock
chmod 700 "$PGDATA" /etc/dbsock
as() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$password" >"$pwfile"
  chown postgres "$pwfile"
  as "$bin/initdb" -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=scram-sha-256 \
    --auth-host=scram-sha-256 -E UTF8 --locale=C >/tmp/initdb.log 2>&1 ||
    { cat /tmp/initdb.log >&2; rm -f "$pwfile"; exit 1; }
  rm -f "$pwfile"
fi
# PostgreSQL listens on its socket only (and, with --backend-tcp, on
# 127.0.0.1 for PgBouncer's hop over TCP): PgBouncer is the way in.
as "$bin/postgres" -D "$PGDATA" -c listen_addresses="$backendtcp" -c port="$pgport" -c unix_socket_directories=/var/run/postgresql \
  -c max_connections=300 -c fsync=off &
umask 077
printf '"%s" "%s"\n' "$user" "$password" >/etc/dbsock/userlist.txt
cat >/etc/dbsock/pgbouncer.ini <<INI
[databases]
* = host=/var/run/postgresql port=$pgport
$([ -z "$backendtcp" ] || echo "${db}_over_tcp = host=127.0.0.1 port=$pgport dbname=$db")
[pgbouncer]
listen_addr = $listen
listen_port = $port
unix_socket_dir = $sockdir
unix_socket_mode = 0777
auth_type = scram-sha-256
auth_file = /etc/dbsock/userlist.txt
admin_users = $user
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 20
ignore_startup_parameters = extra_float_digits
server_login_retry = 0.2
INI
if [ -n "$tlscert" ]; then
  cp "$tlscert" /etc/dbsock/tls-cert.pem
  cp "$tlskey" /etc/dbsock/tls-key.pem
  chown postgres:postgres /etc/dbsock/tls-cert.pem /etc/dbsock/tls-key.pem
  cat >>/etc/dbsock/pgbouncer.ini <<INI
client_tls_sslmode = allow
client_tls_cert_file = /etc/dbsock/tls-cert.pem
client_tls_key_file = /etc/dbsock/tls-key.pem
client_tls_protocols = secure
INI
fi
chown postgres:postgres /etc/dbsock/userlist.txt /etc/dbsock/pgbouncer.ini
# PgBouncer connects to PostgreSQL when a client needs it: no wait here. A
# client that comes before PostgreSQL is up (after a restart) makes that
# login fail, and PgBouncer tries again after server_login_retry (0.2 s,
# not its default 15 s, in which it refuses every client).
exec setpriv --reuid=postgres --regid=postgres --init-groups /usr/sbin/pgbouncer /etc/dbsock/pgbouncer.ini
