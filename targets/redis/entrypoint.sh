#!/bin/sh
# Starts Redis the way the official redis image does: "redis-server"
# followed by its flags (or any other command as given).
set -eu
case "${1:-}" in
  redis-server) exec "$@" ;;
  -*) exec redis-server "$@" ;;
esac
exec "$@"
