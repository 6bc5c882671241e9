#!/usr/bin/env bash
# Installs the database servers dbsock's local provider and integration tests use:
# MariaDB, Redis, memcached, PostgreSQL and PgBouncer from Debian's packages, and FerretDB (a
# MongoDB-wire server) built from the Go module proxy. With --with-browser
# (make test passes it) also Chromium, in which a test renders the HTML
# report, and benchstat (golang.org/x/perf), through which a test reads the
# example module's benchmarks. Safe to run again: what is already there is
# kept.
set -euo pipefail

FERRETDB_VERSION="${FERRETDB_VERSION:-v1.24.0}"
BENCHSTAT_VERSION="${BENCHSTAT_VERSION:-v0.0.0-20260908200009-22c9c6c9d4da}"
BIN_DIR="${DBSOCK_BIN_DIR:-/usr/local/bin}"

need_apt=()
command -v mariadbd >/dev/null 2>&1 || command -v mysqld >/dev/null 2>&1 || need_apt+=(mariadb-server)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v memcached >/dev/null 2>&1 || need_apt+=(memcached)
[ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null 2>&1 || need_apt+=(pgbouncer)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
command -v taskset >/dev/null 2>&1 || need_apt+=(util-linux)
# The HTML report's test renders it in a real browser.
if [ "${1:-}" = "--with-browser" ]; then
  command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to apt-get install ${need_apt[*]}; run: sudo $0" >&2
    exit 1
  fi
  echo "install-deps: apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# Debian installs mariadbd under /usr/sbin, which a non-login PATH may lack.
for b in mariadbd mysqld; do
  if ! command -v "$b" >/dev/null 2>&1 && [ -x "/usr/sbin/$b" ]; then
    ln -sf "/usr/sbin/$b" "$BIN_DIR/$b"
  fi
done

if command -v mongod >/dev/null 2>&1; then
  echo "install-deps: mongod found, FerretDB not needed"
elif command -v ferretdb >/dev/null 2>&1 && ferretdb --version 2>/dev/null | grep -q "${FERRETDB_VERSION}"; then
  echo "install-deps: ferretdb ${FERRETDB_VERSION} already installed"
else
  echo "install-deps: building FerretDB ${FERRETDB_VERSION} from the Go module proxy (about a minute)"
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  export GOFLAGS=-mod=mod
  if ! (cd "$work" && go mod download -json "github.com/FerretDB/FerretDB@${FERRETDB_VERSION}") > "$work/download.json"; then
    echo "install-deps: could not download FerretDB ${FERRETDB_VERSION} from the Go module proxy:" >&2
    cat "$work/download.json" >&2
    exit 1
  fi
  dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' "$work/download.json")
  [ -n "$dir" ] || { echo "install-deps: go mod download of FerretDB ${FERRETDB_VERSION} gave no directory:" >&2; cat "$work/download.json" >&2; exit 1; }
  cp -r "$dir" "$work/src"
  chmod -R u+w "$work/src"
  echo "${FERRETDB_VERSION}" > "$work/src/build/version/version.txt"
  (cd "$work/src" && CGO_ENABLED=0 go build -o "$BIN_DIR/ferretdb" ./cmd/ferretdb)
  echo "install-deps: installed $BIN_DIR/ferretdb"
fi

if [ "${1:-}" = "--with-browser" ]; then
  if command -v benchstat >/dev/null 2>&1; then
    echo "install-deps: benchstat already installed"
  else
    echo "install-deps: go install golang.org/x/perf/cmd/benchstat@${BENCHSTAT_VERSION}"
    GOBIN="$BIN_DIR" go install "golang.org/x/perf/cmd/benchstat@${BENCHSTAT_VERSION}"
  fi
fi
