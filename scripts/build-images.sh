#!/usr/bin/env bash
# Builds local Docker images of the servers dbsock measures, from Debian's
# packages and the Go module proxy alone (no image registry needed):
#   dbsock/mariadb:10.11   MariaDB, standing in for mysql:8.4
#   dbsock/redis:7.0       Redis, standing in for redis:7.4
#   dbsock/ferretdb:1.24   FerretDB (MongoDB wire protocol), standing in for mongo:7.0
#   dbsock/postgres:15     PostgreSQL, standing in for postgres:16
#   dbsock/memcached:1.6   memcached, standing in for memcached:1.6
#   dbsock/pgbouncer:1.18  PgBouncer in front of PostgreSQL (no official image exists)
# Each starts its server as the official image does: the same user and uid
# (999; memcached 11211), root dropped through gosu (memcached never root),
# the same umask, the data directory initialised the same way (a temporary
# server on the image's default socket, then the real one), the same
# environment variables read, and the entrypoint at the same path
# (docker-entrypoint.sh). So the docker and compose providers pass them
# exactly what they pass the official images. Each image's labels say what
# still differs (dbsock.differs). Safe to run again: an image that exists
# with this script's entrypoints is kept (FORCE=1 rebuilds).
set -euo pipefail
cd "$(dirname "$0")/.."

images=(dbsock/mariadb:10.11 dbsock/redis:7.0 dbsock/ferretdb:1.24 dbsock/postgres:15 dbsock/memcached:1.6 dbsock/pgbouncer:1.18)
# The images carry the hash of this script and the entrypoints they were
# built from: a change to either rebuilds them.
recipe=$(cat scripts/build-images.sh targets/*/entrypoint.sh | sha256sum | cut -c1-16)
if [ "${FORCE:-0}" != 1 ]; then
  missing=0
  for i in "${images[@]}"; do
    [ "$(docker image inspect -f '{{index .Config.Labels "dbsock.recipe"}}' "$i" 2>/dev/null)" = "$recipe" ] || missing=1
  done
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
debootstrap --variant=minbase --include=mariadb-server,redis-server,postgresql,memcached,pgbouncer,ca-certificates,gosu bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 ||
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

# renumber USER ID: the user (and its group) get the official image's uid
# and gid, and what they owned follows.
renumber() {
  printf 'RUN set -e; u=%s; id=%s; ou=$(id -u $u); og=$(id -g $u); groupmod -g $id $u; usermod -u $id -g $id $u; find / -xdev \\( -uid $ou -o -gid $og \\) -exec chown -h $id:$id {} +\n' "$1" "$2"
}

build() { # build TAG ENTRYPOINT CMD PRODUCT DIFFERS [DOCKERFILE LINES]
  { printf 'FROM dbsock/base:bookworm\n'
    printf 'LABEL org.opencontainers.image.title="%s" dbsock.image=1 dbsock.recipe=%s dbsock.differs="%s"\n' "$4" "$recipe" "$5"
    printf 'RUN ln -s %s /usr/local/bin/docker-entrypoint.sh\n' "$2"
    printf '%s\n' "${@:6}"
    printf 'ENTRYPOINT ["docker-entrypoint.sh"]\nCMD ["%s"]\n' "$3"
  } | DOCKER_BUILDKIT=0 docker build -q -t "$1" - >"$work/build.log" 2>&1 ||
    { tail -20 "$work/build.log" >&2; echo "build-images: docker build $1 failed" >&2; exit 1; }
  echo "build-images: built $1 ($4)"
}
pg=$(ls "$root"/usr/lib/postgresql | sort -V | tail -1)
build dbsock/mariadb:10.11 mysql-entrypoint.sh mysqld "MariaDB $(chroot "$root" dpkg-query -W -f '${Version}' mariadb-server)" \
  "MariaDB, not MySQL: no X plugin (--loose-mysqlx is ignored), mysql_native_password and ed25519 instead of caching_sha2_password, the server's own defaults (no binary log)" \
  "$(renumber mysql 999)" \
  'RUN mkdir -p /var/lib/mysql /run/mysqld /docker-entrypoint-initdb.d && chown mysql:mysql /var/lib/mysql /run/mysqld && chmod 1777 /var/lib/mysql /run/mysqld' \
  'VOLUME /var/lib/mysql'
build dbsock/redis:7.0 redis-entrypoint.sh redis-server "Redis $(chroot "$root" dpkg-query -W -f '${Version}' redis-server)" \
  "Redis 7.0 from Debian, not 7.4" \
  "$(renumber redis 999)" \
  'RUN mkdir /data && chown redis:redis /data' 'VOLUME /data' 'WORKDIR /data'
build dbsock/ferretdb:1.24 mongo-entrypoint.sh mongod "FerretDB $(ferretdb --version 2>&1 | head -1 | awk '{print $2}')" \
  "FerretDB with SQLite, not MongoDB: its own SCRAM authentication (MONGO_INITDB_ROOT_* make the user), the mongod flags dbsock passes translated" \
  'RUN groupadd --gid 999 --system mongodb && useradd --uid 999 --system --gid mongodb --home-dir /data/db mongodb && mkdir -p /data/db /data/configdb && chown -R mongodb:mongodb /data/db /data/configdb' \
  'VOLUME /data/db /data/configdb'
build dbsock/postgres:15 postgres-entrypoint.sh postgres "PostgreSQL $(chroot "$root" dpkg-query -W -f '${Version}' postgresql)" \
  "PostgreSQL 15 from Debian, not 16" \
  "$(renumber postgres 999)" \
  "ENV PG_MAJOR=$pg PGDATA=/var/lib/postgresql/data PATH=/usr/lib/postgresql/$pg/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  'RUN install -d -o postgres -g postgres -m 3777 /var/run/postgresql && install -d -o postgres -g postgres -m 1777 /var/lib/postgresql/data && mkdir -p /docker-entrypoint-initdb.d' \
  'VOLUME /var/lib/postgresql/data' 'STOPSIGNAL SIGINT'
build dbsock/memcached:1.6 memcached-entrypoint.sh memcached "memcached $(chroot "$root" dpkg-query -W -f '${Version}' memcached)" \
  "memcached from Debian" \
  "$(renumber memcache 11211)" 'USER memcache'
build dbsock/pgbouncer:1.18 pgbouncer-entrypoint.sh pgbouncer "PgBouncer $(chroot "$root" dpkg-query -W -f '${Version}' pgbouncer)" \
  "dbsock's own image (there is no official one): PostgreSQL on its own socket behind PgBouncer"
