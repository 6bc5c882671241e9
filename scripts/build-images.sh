#!/usr/bin/env bash
# Builds local Docker images of the servers dbsock measures, from Debian's
# packages and the Go module proxy alone (no image registry needed):
#   dbsock/mariadb:10.11   MariaDB, started like the official mysql image
#   dbsock/redis:7.0       Redis, started like the official redis image
#   dbsock/ferretdb:1.24   FerretDB (MongoDB wire protocol), started like the official mongo image
#   dbsock/postgres:15     PostgreSQL, started like the official postgres image
#   dbsock/memcached:1.6   memcached, started like the official memcached image
#   dbsock/pgbouncer:1.18  PgBouncer in front of PostgreSQL (no official image exists)
# Each takes the same server flags dbsock passes to the official images, so
# the docker and compose providers run unchanged with --image or the
# compose file's environment variables. Safe to run again: an image that
# exists is kept (FORCE=1 rebuilds).
set -euo pipefail
cd "$(dirname "$0")/.."

images=(dbsock/mariadb:10.11 dbsock/redis:7.0 dbsock/ferretdb:1.24 dbsock/postgres:15 dbsock/memcached:1.6 dbsock/pgbouncer:1.18)
if [ "${FORCE:-0}" != 1 ]; then
  missing=0
  for i in "${images[@]}"; do docker image inspect "$i" >/dev/null 2>&1 || missing=1; done
  if [ "$missing" = 0 ]; then echo "build-images: ${images[*]} already built"; exit 0; fi
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || { echo "build-images: need root to install debootstrap and to debootstrap" >&2; exit 1; }
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
command -v ferretdb >/dev/null 2>&1 || scripts/install-deps.sh

# The Debian mirror this machine already uses.
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || { echo "build-images: cannot find a Debian mirror in /etc/apt" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
echo "build-images: debootstrap bookworm with the servers dbsock measures from $mirror (a minute or two)"
debootstrap --variant=minbase --include=mariadb-server,redis-server,postgresql,memcached,pgbouncer,ca-certificates bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
# The packages initialised data dirs: the entrypoints make fresh ones with the run's accounts.
rm -rf "$root"/var/lib/mysql/* "$root"/var/lib/postgresql/*/main
# Each target keeps its image's entrypoint beside its recipe: targets/NAME/entrypoint.sh.
for f in targets/*/entrypoint.sh; do
  install -m 755 "$f" "$root/usr/local/bin/$(basename "$(dirname "$f")")-entrypoint.sh"
done
cp "$(command -v ferretdb)" "$root/usr/local/bin/ferretdb"
tar -C "$root" -c . | docker import - dbsock/base:bookworm >/dev/null

build() { # build TAG ENTRYPOINT CMD PRODUCT
  printf 'FROM dbsock/base:bookworm\nLABEL org.opencontainers.image.title="%s" dbsock.image=1\nENTRYPOINT ["/usr/local/bin/%s"]\nCMD ["%s"]\n' "$4" "$2" "$3" |
    DOCKER_BUILDKIT=0 docker build -q -t "$1" - >/dev/null 2>&1 || { echo "build-images: docker build $1 failed" >&2; exit 1; }
  echo "build-images: built $1 ($4)"
}
build dbsock/mariadb:10.11 mysql-entrypoint.sh mysqld "MariaDB $(chroot "$root" dpkg-query -W -f '${Version}' mariadb-server)"
build dbsock/redis:7.0 redis-entrypoint.sh redis-server "Redis $(chroot "$root" dpkg-query -W -f '${Version}' redis-server)"
build dbsock/ferretdb:1.24 mongo-entrypoint.sh mongod "FerretDB $(ferretdb --version 2>&1 | head -1 | awk '{print $2}')"
build dbsock/postgres:15 postgres-entrypoint.sh postgres "PostgreSQL $(chroot "$root" dpkg-query -W -f '${Version}' postgresql)"
build dbsock/memcached:1.6 memcached-entrypoint.sh memcached "memcached $(chroot "$root" dpkg-query -W -f '${Version}' memcached)"
build dbsock/pgbouncer:1.18 pgbouncer-entrypoint.sh pgbouncer "PgBouncer $(chroot "$root" dpkg-query -W -f '${Version}' pgbouncer)"
