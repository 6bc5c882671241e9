#!/bin/sh
# Starts FerretDB (SQLite backend) when given the mongod flags dbsock passes
# to the official mongo image: --port, --bind_ip, --unixSocketPrefix,
# --dbpath, --filePermissions. The socket is DIR/mongodb-PORT.sock, as
# mongod names it.
set -eu
case "${1:-}" in mongod) shift ;; esac
port=27017 bind=127.0.0.1 prefix=/tmp dbpath=/data/db
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
    --filePermissions | --setParameter) shift 2 ;;
    *) shift ;;
  esac
done
mkdir -p "$dbpath"
umask 000 # the socket must be connectable from the host, like --filePermissions 0777
exec ferretdb --handler=sqlite --sqlite-url="file:$dbpath/" --state-dir="$dbpath" \
  --listen-addr="${bind%%,*}:$port" --listen-unix="$prefix/mongodb-$port.sock" \
  --telemetry=disable --log-level=warn --debug-addr=-
