#!/bin/sh
# Starts MariaDB the way the official mysql image starts MySQL, for the
# subset dbsock uses: "mysqld" (or "mariadbd") followed by server flags, and
# on the first start MYSQL_ROOT_PASSWORD, MYSQL_DATABASE, MYSQL_USER and
# MYSQL_PASSWORD create the schema and accounts.
set -eu
case "${1:-}" in mysqld | mariadbd) shift ;; esac
datadir=/var/lib/mysql
for a in "$@"; do
  case "$a" in --datadir=*) datadir="${a#--datadir=}" ;; esac
done
if [ ! -d "$datadir/mysql" ]; then
  mkdir -p "$datadir"
  mariadb-install-db --no-defaults --datadir="$datadir" --user=root \
    --auth-root-authentication-method=normal --skip-test-db --force >/tmp/install-db.log 2>&1 ||
    { cat /tmp/install-db.log >&2; exit 1; }
  init=/run/dbsock-init.sql
  umask 077
  : >"$init"
  if [ -n "${MYSQL_DATABASE:-}" ]; then
    echo "CREATE DATABASE IF NOT EXISTS \`$MYSQL_DATABASE\`;" >>"$init"
  fi
  if [ -n "${MYSQL_USER:-}" ]; then
    for host in '%' localhost; do
      echo "CREATE USER IF NOT EXISTS '$MYSQL_USER'@'$host' IDENTIFIED BY '${MYSQL_PASSWORD:-}';" >>"$init"
      if [ -n "${MYSQL_DATABASE:-}" ]; then
        echo "GRANT ALL ON \`$MYSQL_DATABASE\`.* TO '$MYSQL_USER'@'$host';" >>"$init"
      fi
    done
  fi
  if [ -n "${MYSQL_ROOT_PASSWORD:-}" ]; then
    echo "ALTER USER 'root'@'localhost' IDENTIFIED BY '$MYSQL_ROOT_PASSWORD';" >>"$init"
  fi
  umask 022
  set -- --init-file="$init" "$@"
fi
exec mariadbd --no-defaults --user=root --datadir="$datadir" --skip-log-bin --skip-name-resolve "$@"
