#!/bin/sh
# dbsock/memcached's entrypoint: memcached from Debian's packages, started
# the way the official memcached image starts it: the image runs as the
# memcache user (uid 11211, the image's USER), never as root; a first
# argument that is a flag means "memcached FLAGS"; any other command runs
# as given.
# Written for dbsock from the official image's documented behaviour.
set -e
if [ "${1#-}" != "$1" ]; then
  set -- memcached "$@"
fi
exec "$@"
