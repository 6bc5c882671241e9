#!/bin/bash
# dbsock/ferretdb's entrypoint: FerretDB (SQLite backend), which speaks
# MongoDB's wire protocol, started where dbsock starts the official mongo
# image and given the same mongod flags: --port, --bind_ip, --dbpath,
# --unixSocketPrefix (the socket is DIR/mongodb-PORT.sock, as mongod names
# it) and --filePermissions (the socket's mode). As the official image
# does, a first argument that is a flag means "mongod FLAGS", and as root
# it makes /data/db and /data/configdb the mongodb user's (uid 999) and
# runs again as that user through gosu.
# MONGO_INITDB_ROOT_USERNAME and MONGO_INITDB_ROOT_PASSWORD, or VAR_FILE
# for each, as in mongo:7.0, make that user in admin and turn
# authentication on (FerretDB's SCRAM authentication); one without the
# other is refused. As root, a VAR_FILE is copied where the mongodb user
# reads it. As in mongo:7.0 a temporary server makes the user, here on a
# socket in a directory of the mongodb user's alone and no TCP port; it is
# the one process that has the password in its environment (FerretDB
# takes its set-up user's password from there or its command line only),
# for the moment it starts; the server then runs without it.
# What still differs from mongo:7.0: the server is FerretDB, not MongoDB;
# /docker-entrypoint-initdb.d is not read.
set -Eeuo pipefail
if [ "${1:0:1}" = - ]; then set -- mongod "$@"; fi
if [ "$1" != mongod ]; then exec "$@"; fi

# from_env VAR: VAR, or the contents of VAR_FILE, kept in this shell only
# (not exported). A copy hand_over made is removed once read.
handed=/run/dbsock-entrypoint
from_env() {
  local var=$1 file=${1}_FILE val=
  if [ -n "${!var:-}" ] && [ -n "${!file:-}" ]; then
    echo "error: dbsock/ferretdb: both $var and $file are set (but are exclusive)" >&2
    exit 1
  fi
  if [ -n "${!var:-}" ]; then
    val=${!var}
  elif [ -n "${!file:-}" ]; then
    val=$(<"${!file}")
    case "${!file}" in "$handed"/*) rm -f "${!file}" ;; esac
  fi
  unset "$file" "$var"
  printf -v "$var" '%s' "$val"
}

# hand_over USER VAR...: as root, each VAR, or the file VAR_FILE names, is
# copied into a directory of USER's and VAR_FILE names the copy: the
# values cross the switch to USER in files, not in the environment.
hand_over() {
  local user=$1 var file
  shift
  install -d -m 0700 -o "$user" "$handed"
  for var; do
    file=${var}_FILE
    if [ -n "${!file:-}" ] && [ -z "${!var:-}" ]; then
      install -m 0400 -o "$user" "${!file}" "$handed/$var"
    elif [ -n "${!var:-}" ] && [ -z "${!file:-}" ]; then
      (umask 0277 && printf '%s' "${!var}" >"$handed/$var")
      chown "$user" "$handed/$var"
    else
      continue # neither, or both (from_env refuses that)
    fi
    unset "$var"
    export "$file=$handed/$var"
  done
}

if [ "$(id -u)" = 0 ]; then
  find -L /data/configdb /data/db \! -user mongodb -exec chown mongodb '{}' +
  hand_over mongodb MONGO_INITDB_ROOT_USERNAME MONGO_INITDB_ROOT_PASSWORD
  exec gosu mongodb "$BASH_SOURCE" "$@"
fi
from_env MONGO_INITDB_ROOT_USERNAME
from_env MONGO_INITDB_ROOT_PASSWORD
if [ -n "$MONGO_INITDB_ROOT_USERNAME$MONGO_INITDB_ROOT_PASSWORD" ]; then
  if [ -z "$MONGO_INITDB_ROOT_USERNAME" ] || [ -z "$MONGO_INITDB_ROOT_PASSWORD" ]; then
    echo "error: dbsock/ferretdb: set both MONGO_INITDB_ROOT_USERNAME and MONGO_INITDB_ROOT_PASSWORD, or neither" >&2
    exit 1
  fi
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
flags() { # flags TCP SOCKET: FerretDB's flags, SQLite in dbpath
  flags=(--handler=sqlite --sqlite-url="file:$dbpath/" --state-dir="$dbpath"
    --listen-addr="$1" --listen-unix="$2" --telemetry=disable --log-level=warn --debug-addr=-)
}
auth=()
if [ -n "$MONGO_INITDB_ROOT_USERNAME" ]; then
  auth=(--test-enable-new-auth)
  if [ ! -e "$dbpath/admin.sqlite" ]; then
    # The temporary server: it makes the user as it starts, before it
    # listens, on a private socket only; then it stops.
    setup=$(mktemp -d)/setup.sock # a directory of this user's alone
    flags "" "$setup"
    FERRETDB_SETUP_PASSWORD=$MONGO_INITDB_ROOT_PASSWORD ferretdb "${flags[@]}" "${auth[@]}" \
      --setup-database=admin --setup-username="$MONGO_INITDB_ROOT_USERNAME" &
    temp=$!
    for _ in $(seq 600); do
      [ -S "$setup" ] && break
      kill -0 "$temp" 2>/dev/null || { echo "error: dbsock/ferretdb: the temporary server exited" >&2; exit 1; }
      sleep 0.1
    done
    kill "$temp"
    wait "$temp" || :
    rm -rf "$(dirname "$setup")"
    [ -e "$dbpath/admin.sqlite" ] || { echo "error: dbsock/ferretdb: the temporary server made no user" >&2; exit 1; }
  fi
fi
unset MONGO_INITDB_ROOT_PASSWORD
umask "$(printf '%04o' $((0777 & ~8#${perms#0})))" # the socket's mode, as --filePermissions gives it
flags "${bind%%,*}:$port" "$prefix/mongodb-$port.sock"
exec ferretdb "${flags[@]}" "${auth[@]}"
