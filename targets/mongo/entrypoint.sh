#!/bin/bash
# dbsock/ferretdb's entrypoint: FerretDB (SQLite backend), which speaks
# MongoDB's wire protocol, started where dbsock starts the official mongo
# image and given the same mongod flags: --port, --bind_ip, --dbpath,
# --unixSocketPrefix (the socket is DIR/mongodb-PORT.sock, as mongod names
# it) and --filePermissions (the socket's mode). As the official image
# does, a first argument that is a flag means "mongod FLAGS", and as root
# it makes /data/db and /data/configdb the mongodb user's (uid 999) and
# runs again as that user through gosu.
# MONGO_INITDB_ROOT_USERNAME and MONGO_INITDB_ROOT_PASSWORD, as in mongo:7.0,
# make that user in admin and turn authentication on (FerretDB's SCRAM
# authentication and its set-up user; the password stays in the
# environment, never on a command line); one without the other is refused.
# What still differs from mongo:7.0: the server is FerretDB, not MongoDB;
# there is no temporary server (FerretDB makes the user as it starts);
# /docker-entrypoint-initdb.d is not read.
set -Eeuo pipefail
if [ "${1:0:1}" = - ]; then set -- mongod "$@"; fi
if [ "$1" != mongod ]; then exec "$@"; fi
auth=()
if [ -n "${MONGO_INITDB_ROOT_USERNAME:-}${MONGO_INITDB_ROOT_PASSWORD:-}" ]; then
  if [ -z "${MONGO_INITDB_ROOT_USERNAME:-}" ] || [ -z "${MONGO_INITDB_ROOT_PASSWORD:-}" ]; then
    echo "error: dbsock/ferretdb: set both MONGO_INITDB_ROOT_USERNAME and MONGO_INITDB_ROOT_PASSWORD, or neither" >&2
    exit 1
  fi
  auth=(--test-enable-new-auth --setup-database=admin --setup-username="$MONGO_INITDB_ROOT_USERNAME")
  export FERRETDB_SETUP_PASSWORD="$MONGO_INITDB_ROOT_PASSWORD"
fi
if [ "$(id -u)" = 0 ]; then
  find -L /data/configdb /data/db \! -user mongodb -exec chown mongodb '{}' +
  exec gosu mongodb "$BASH_SOURCE" "$@"
fi
shift
port=27017 bind=127.0.0.1 prefix=/tmp dbpath=/data/db perms=0700
while [ $# -gt 0 ]; do
  case "$1" in
    --port) port=$2; shift 2 ;;
    --port=*) port=${1#--port=}; shift ;;
    --bind_ip) bind=$2; shift 2 ;;
    --bind_ip=*) bind=${1#--bind_ip=}; shift ;;
    --unixSocketPrefix) prefix=$2; shift 2 ;;
    --unixSocketPrefix=*) prefix=${1#--unixSocketPrefix=}; shift ;;
    --dbpath) dbpath=$2; shift 2 ;;
    --dbpath=*) dbpath=${1#--dbpath=}; shift ;;
    --filePermissions) perms=$2; shift 2 ;;
    --filePermissions=*) perms=${1#--filePermissions=}; shift ;;
    --setParameter) shift 2 ;;
    *) shift ;;
  esac
done
mkdir -p "$dbpath"
umask "$(printf '%04o' $((0777 & ~8#${perms#0})))" # the socket's mode, as --filePermissions gives it
exec ferretdb --handler=sqlite --sqlite-url="file:$dbpath/" --state-dir="$dbpath" \
  --listen-addr="${bind%%,*}:$port" --listen-unix="$prefix/mongodb-$port.sock" \
  --telemetry=disable --log-level=warn --debug-addr=- "${auth[@]}"
