#!/usr/bin/env bash
# Builds local Docker images of the servers dbsock measures, from Debian's
# packages and the Go module proxy alone (no image registry needed):
#   dbsock/mariadb:10.11   MariaDB, standing in for mysql:8.4
#   dbsock/redis:7.0       Redis, standing in for redis:7.4
#   dbsock/ferretdb:1.24   FerretDB (MongoDB wire protocol), standing in for mongo:7.0
#   dbsock/postgres:15     PostgreSQL, standing in for postgres:16
#   dbsock/memcached:1.6   memcached, standing in for memcached:1.6
#   dbsock/pgbouncer:1.18  PgBouncer in front of PostgreSQL (no official image exists)
#   dbsock/haproxy:2.6     HAProxy in TCP mode on dbsock's configuration, in
#                          front of another container's server (--via haproxy)
# Each starts its server as the official image does: the same user and uid
# (999; memcached 11211), root dropped through gosu (memcached and HAProxy,
# as the haproxy user, never root), the same umask, the data directory
# initialised the same way (a temporary server on the image's default
# socket, then the real one), the same environment variables read, and the
# entrypoint at the same path
# (docker-entrypoint.sh). So the docker and compose providers pass them
# exactly what they pass the official images. Each image's labels say what
# still differs (dbsock.differs). They share one root filesystem with
# every server, built once, as their first layer; each image's own set-up
# runs in an overlay over it and becomes its second layer; all of them go
# to the engine in one "docker load" (about a minute, most of it
# mmdebstrap's). Safe to run again: an image that exists with this
# script's entrypoints is kept (FORCE=1 rebuilds).
set -euo pipefail
cd "$(dirname "$0")/.."

images=(dbsock/mariadb:10.11 dbsock/redis:7.0 dbsock/ferretdb:1.24 dbsock/postgres:15 dbsock/memcached:1.6 dbsock/pgbouncer:1.18 dbsock/haproxy:2.6)
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
if ! command -v mmdebstrap >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || { echo "build-images: need root to install mmdebstrap and to build a root filesystem" >&2; exit 1; }
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi
command -v ferretdb >/dev/null 2>&1 || scripts/install-deps.sh

# The Debian mirror this machine already uses.
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || { echo "build-images: cannot find a Debian mirror in /etc/apt" >&2; exit 1; }

work=$(mktemp -d)
trap 'umount -q "$work"/mnt/* 2>/dev/null || true; rm -rf "$work"' EXIT
root="$work/rootfs"
# One root filesystem with every server, built once (mmdebstrap: apt's
# resolver, parallel downloads and one dpkg run); each image is it plus a
# small layer of its own.
echo "build-images: mmdebstrap bookworm with the servers dbsock measures from $mirror (under a minute)"
mmdebstrap --variant=minbase --include=mariadb-server,redis-server,postgresql,memcached,pgbouncer,haproxy,ca-certificates,gosu,usr-is-merged \
  --dpkgopt=force-unsafe-io --skip=cleanup/run bookworm "$root" "$mirror" > "$work/mmdebstrap.log" 2>&1 ||
  { tail -20 "$work/mmdebstrap.log" >&2; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/etc/dpkg/dpkg.cfg.d/99mmdebstrap
# The packages initialised data dirs: the entrypoints make fresh ones with the run's accounts.
rm -rf "$root"/var/lib/mysql/* "$root"/var/lib/postgresql/*/main
# Each target keeps its image's entrypoint beside its recipe: targets/NAME/entrypoint.sh.
for f in targets/*/entrypoint.sh; do
  install -m 755 "$f" "$root/usr/local/bin/$(basename "$(dirname "$f")")-entrypoint.sh"
done
cp "$(command -v ferretdb)" "$root/usr/local/bin/ferretdb"

# The images go to the engine in one "docker load" archive: the root
# filesystem as the layer they share, each image's own changes as a layer
# on top, and each image's configuration (what a Dockerfile's ENTRYPOINT,
# CMD, ENV, USER, VOLUME, WORKDIR, STOPSIGNAL and LABEL would set).
archive="$work/archive"
mkdir -p "$archive" "$work/upper" "$work/over" "$work/mnt"
tar -C "$root" -c . >"$archive/base.tar"
base_diff=sha256:$(sha256sum "$archive/base.tar" | cut -d' ' -f1)
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
case "$(dpkg --print-architecture)" in
  ppc64el) arch=ppc64le ;; i386) arch=386 ;; armhf) arch=arm ;; *) arch=$(dpkg --print-architecture) ;;
esac
base_cmd="mmdebstrap --variant=minbase bookworm with mariadb-server redis-server postgresql memcached pgbouncer haproxy ca-certificates gosu, targets/*/entrypoint.sh and ferretdb"
manifest=()

json() { # json STRING: STRING as a JSON string
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}

# image TAG CONFIG [HISTORY LAYER]: writes TAG's configuration (CONFIG:
# the members of its "config"), on the base layer and, with LAYER (a file
# in the archive), that layer made by HISTORY, into the archive.
image() {
  local diffs="\"$base_diff\"" layers='"base.tar"' history="{\"created\":\"$created\",\"created_by\":$(json "$base_cmd")}"
  if [ $# -gt 2 ]; then
    diffs="$diffs,\"sha256:$(sha256sum "$archive/$4" | cut -d' ' -f1)\"" layers="$layers,\"$4\""
    history="$history,{\"created\":\"$created\",\"created_by\":$(json "$3")}"
  fi
  local config="{\"architecture\":\"$arch\",\"os\":\"linux\",\"created\":\"$created\",\"config\":{$2},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[$diffs]},\"history\":[$history]}"
  local id
  id=$(printf '%s' "$config" | sha256sum | cut -d' ' -f1)
  printf '%s' "$config" >"$archive/$id.json"
  manifest+=("{\"Config\":\"$id.json\",\"RepoTags\":[\"$1\"],\"Layers\":[$layers]}")
}

# renumber USER ID: the user (and its group) get the official image's uid
# and gid, and what they owned follows.
renumber() {
  printf 'u=%s; id=%s; ou=$(id -u $u); og=$(id -g $u); groupmod -g $id $u; usermod -u $id -g $id $u; find / -xdev \\( -uid $ou -o -gid $og \\) -exec chown -h $id:$id {} +' "$1" "$2"
}

# build TAG ENTRYPOINT CMD PRODUCT DIFFERS CONFIG [SHELL COMMANDS]: TAG is
# the root filesystem with ENTRYPOINT as docker-entrypoint.sh and the
# commands run on it (in an overlay over it, whose upper directory becomes
# TAG's layer), starting CMD; CONFIG adds to its configuration.
build() {
  local n cmds
  n=$(printf '%s' "$1" | tr '/:' '__')
  cmds="ln -s $2 /usr/local/bin/docker-entrypoint.sh"
  for c in "${@:7}"; do cmds="$cmds; $c"; done
  local up="$work/upper/$n" mnt="$work/mnt/$n"
  mkdir -p "$up" "$work/over/$n" "$mnt"
  chmod --reference="$root" "$up"
  mount -t overlay overlay -o "lowerdir=$root,upperdir=$up,workdir=$work/over/$n" "$mnt" ||
    { echo "build-images: cannot mount an overlay over the root filesystem for $1 (build-images needs root and overlayfs)" >&2; exit 1; }
  chroot "$mnt" /bin/sh -ec "$cmds" >"$work/build.log" 2>&1 ||
    { umount "$mnt"; tail -20 "$work/build.log" >&2; echo "build-images: building $1 failed" >&2; exit 1; }
  umount "$mnt"
  # What the commands deleted is a character device 0/0 in the upper
  # directory: an image layer says it with a .wh. file instead.
  find "$up" -type c | while read -r w; do
    rm "$w" && : >"$(dirname "$w")/.wh.$(basename "$w")"
  done
  tar -C "$up" -c . >"$archive/$n.tar"
  local labels
  labels="\"Labels\":{\"org.opencontainers.image.title\":$(json "$4"),\"dbsock.image\":\"1\",\"dbsock.recipe\":\"$recipe\",\"dbsock.differs\":$(json "$5")}"
  image "$1" "\"Entrypoint\":[\"docker-entrypoint.sh\"],\"Cmd\":[\"$3\"],$labels${6:+,$6}" "$cmds" "$n.tar"
  echo "build-images: built $1 ($4)"
}
path='"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'
pg=$(ls "$root"/usr/lib/postgresql | sort -V | tail -1)
image dbsock/base:bookworm ""
build dbsock/mariadb:10.11 mysql-entrypoint.sh mysqld "MariaDB $(chroot "$root" dpkg-query -W -f '${Version}' mariadb-server)" \
  "MariaDB, not MySQL: no X plugin (--loose-mysqlx is ignored), mysql_native_password and ed25519 instead of caching_sha2_password, the server's own defaults (no binary log)" \
  "$path"',"Volumes":{"/var/lib/mysql":{}}' \
  "$(renumber mysql 999)" \
  'mkdir -p /var/lib/mysql /run/mysqld /docker-entrypoint-initdb.d && chown mysql:mysql /var/lib/mysql /run/mysqld && chmod 1777 /var/lib/mysql /run/mysqld'
build dbsock/redis:7.0 redis-entrypoint.sh redis-server "Redis $(chroot "$root" dpkg-query -W -f '${Version}' redis-server)" \
  "Redis 7.0 from Debian, not 7.4" \
  "$path"',"Volumes":{"/data":{}},"WorkingDir":"/data"' \
  "$(renumber redis 999)" \
  'mkdir /data && chown redis:redis /data'
build dbsock/ferretdb:1.24 mongo-entrypoint.sh mongod "FerretDB $(ferretdb --version 2>&1 | head -1 | awk '{print $2}')" \
  "FerretDB with SQLite, not MongoDB: its own SCRAM authentication (MONGO_INITDB_ROOT_* make the user), the mongod flags dbsock passes translated" \
  "$path"',"Volumes":{"/data/db":{},"/data/configdb":{}}' \
  'groupadd --gid 999 --system mongodb && useradd --uid 999 --system --gid mongodb --home-dir /data/db mongodb && mkdir -p /data/db /data/configdb && chown -R mongodb:mongodb /data/db /data/configdb'
build dbsock/postgres:15 postgres-entrypoint.sh postgres "PostgreSQL $(chroot "$root" dpkg-query -W -f '${Version}' postgresql)" \
  "PostgreSQL 15 from Debian, not 16" \
  "\"Env\":[\"PATH=/usr/lib/postgresql/$pg/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\"PG_MAJOR=$pg\",\"PGDATA=/var/lib/postgresql/data\"]"',"Volumes":{"/var/lib/postgresql/data":{}},"StopSignal":"SIGINT"' \
  "$(renumber postgres 999)" \
  'install -d -o postgres -g postgres -m 3777 /var/run/postgresql && install -d -o postgres -g postgres -m 1777 /var/lib/postgresql/data && mkdir -p /docker-entrypoint-initdb.d'
build dbsock/memcached:1.6 memcached-entrypoint.sh memcached "memcached $(chroot "$root" dpkg-query -W -f '${Version}' memcached)" \
  "memcached from Debian" \
  "$path"',"User":"memcache"' \
  "$(renumber memcache 11211)"
build dbsock/pgbouncer:1.18 pgbouncer-entrypoint.sh pgbouncer "PgBouncer $(chroot "$root" dpkg-query -W -f '${Version}' pgbouncer)" \
  "dbsock's own image (there is no official one): PostgreSQL on its own socket behind PgBouncer" \
  "$path"
build dbsock/haproxy:2.6 haproxy-entrypoint.sh haproxy "HAProxy $(chroot "$root" dpkg-query -W -f '${Version}' haproxy)" \
  "dbsock's own image: HAProxy 2.6 from Debian, in TCP mode on the configuration dbsock writes into /sock, in front of another container's server" \
  "$path"',"User":"haproxy","StopSignal":"SIGUSR1"'
(IFS=,; printf '[%s]' "${manifest[*]}") >"$archive/manifest.json"
echo "build-images: loading ${images[*]} into the engine"
tar -C "$archive" -c . | docker load -q >/dev/null
