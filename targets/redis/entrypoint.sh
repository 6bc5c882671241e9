#!/bin/sh
# dbsock/redis's entrypoint: Redis from Debian's packages, started the way
# the official redis image starts it: a first argument that is a flag or a
# .conf file means "redis-server ARGS"; as root, redis-server is run as
# the redis user (uid 999) through gosu, after the working directory
# (/data) is made that user's; the umask becomes 0077 unless one other
# than 0022 was set (so a socket without unixsocketperm is the server
# user's alone, as in the official image).
# Written for dbsock from the official image's documented behaviour.
set -e
if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then
  set -- redis-server "$@"
fi
if [ "$1" = redis-server ] && [ "$(id -u)" = 0 ]; then
  find . \! -user redis -exec chown redis '{}' +
  exec gosu redis "$0" "$@"
fi
if [ "$(umask)" = 0022 ]; then
  umask 0077
fi
exec "$@"
