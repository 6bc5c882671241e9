#!/bin/sh
# Runs HAProxy in the foreground on the configuration dbsock wrote into
# the socket directory it mounts at /sock, for dbsock's haproxy-TARGET
# targets (HAProxy in TCP mode in front of another container's server):
#   haproxy -f /sock/haproxy.cfg
# The configuration holds no password (TCP mode relays bytes): frontends
# on 127.0.0.1 and in /sock, backends at the server's 127.0.0.1 port and
# at its socket under /behind (the server's socket directory), and the
# stats socket /sock/stats.sock, which dbsock reads from the host. The
# image runs it as the haproxy user; dbsock runs it as its own user where
# it is not root. As the official image does, arguments that begin with
# "-" are HAProxy's, and -db keeps it in the foreground as the
# container's first process. The image's stop signal is SIGUSR1, as the
# official image's: HAProxy there does not stop on SIGTERM, and on SIGUSR1
# it stops once its connections end, within hard-stop-after (1 s in
# dbsock's configuration) when they do not.
set -eu
case "${1:-}" in -*) set -- haproxy "$@" ;; esac
if [ "${1:-}" = haproxy ]; then
  shift
  cfg=
  prev=
  for a in "$@"; do
    [ "$prev" != -f ] || cfg=$a
    prev=$a
  done
  if [ -n "$cfg" ] && [ ! -r "$cfg" ]; then
    echo "haproxy-entrypoint: cannot read the configuration $cfg as uid $(id -u): dbsock writes it into the socket directory it mounts at /sock" >&2
    exit 1
  fi
  set -- haproxy -db "$@"
fi
exec "$@"
