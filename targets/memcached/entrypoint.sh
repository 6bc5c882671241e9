#!/bin/sh
# Runs the command as given, as the official memcached image does for a
# command that is not a flag ("memcached ..." or "sh -c ..."); flags alone
# start memcached with them.
set -eu
case "${1:-}" in
  -*) exec memcached "$@" ;;
esac
exec "$@"
