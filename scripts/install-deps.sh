#!/usr/bin/env bash
# Installs the database servers dbsock's local provider and integration tests use:
# MariaDB, Redis, memcached, PostgreSQL and PgBouncer from Debian's packages, and FerretDB (a
# MongoDB-wire server) built from the Go module proxy. With --with-browser
# (make test passes it) also Chromium, in which a test renders the HTML
# report, benchstat (golang.org/x/perf), through which a test reads the
# example module's benchmarks, and gotestsum, through which make test runs
# go test and lists its slowest tests. With --with-stacks also the client stacks
# of the agents under agents/ (see the end of this script). With
# --with-peers also the field's tools that scripts/peers.sh runs beside
# dbsock: sysbench, redis-benchmark (redis-tools), pgbench (PostgreSQL's
# server package has it) and jq. Safe to run again: what is already there
# is kept.
set -euo pipefail

FERRETDB_VERSION="${FERRETDB_VERSION:-v1.24.0}"
BENCHSTAT_VERSION="${BENCHSTAT_VERSION:-v0.0.0-20260908200009-22c9c6c9d4da}"
GOTESTSUM_VERSION="${GOTESTSUM_VERSION:-v1.13.0}"
BIN_DIR="${DBSOCK_BIN_DIR:-/usr/local/bin}"

with_browser=false
with_stacks=false
with_peers=false
for arg in "$@"; do
  case "$arg" in
    --with-browser) with_browser=true ;;
    --with-stacks) with_stacks=true ;;
    --with-peers) with_peers=true ;;
    *) echo "install-deps: unknown option $arg (want --with-browser, --with-stacks, --with-peers)" >&2; exit 2 ;;
  esac
done

need_apt=()
command -v mariadbd >/dev/null 2>&1 || command -v mysqld >/dev/null 2>&1 || need_apt+=(mariadb-server)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v memcached >/dev/null 2>&1 || need_apt+=(memcached)
[ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null 2>&1 || need_apt+=(pgbouncer)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
command -v taskset >/dev/null 2>&1 || need_apt+=(util-linux)
# A proxy in front of a server the user runs: the tests put HAProxy where
# the server's socket should be, and dbsock must name it.
[ -x /usr/sbin/haproxy ] || command -v haproxy >/dev/null 2>&1 || need_apt+=(haproxy)
# twemproxy (nutcracker) in front of Redis: --via twemproxy and its tests.
[ -x /usr/sbin/nutcracker ] || command -v nutcracker >/dev/null 2>&1 || need_apt+=(nutcracker)
# The HTML report's test renders it in a real browser.
if $with_browser; then
  command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
fi
# scripts/peers.sh's tools (pgbench comes with the postgresql package above).
if $with_peers; then
  command -v sysbench >/dev/null 2>&1 || need_apt+=(sysbench)
  command -v redis-benchmark >/dev/null 2>&1 || need_apt+=(redis-tools)
  ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1 || command -v pgbench >/dev/null 2>&1 || need_apt+=(postgresql)
  command -v jq >/dev/null 2>&1 || need_apt+=(jq)
  command -v ss >/dev/null 2>&1 || need_apt+=(iproute2)
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to apt-get install ${need_apt[*]}; run: sudo $0 $*" >&2
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
# A tool's version is read whole before it is matched: with pipefail,
# "tool --version | grep -q" fails whenever grep has matched and gone before
# the tool wrote its last line (SIGPIPE), and FerretDB was built again.
elif command -v ferretdb >/dev/null 2>&1 && [[ "$(ferretdb --version 2>/dev/null || true)" == *"${FERRETDB_VERSION}"* ]]; then
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

if $with_browser; then
  if command -v benchstat >/dev/null 2>&1; then
    echo "install-deps: benchstat already installed"
  else
    echo "install-deps: go install golang.org/x/perf/cmd/benchstat@${BENCHSTAT_VERSION}"
    GOBIN="$BIN_DIR" go install "golang.org/x/perf/cmd/benchstat@${BENCHSTAT_VERSION}"
  fi
  if command -v gotestsum >/dev/null 2>&1 && [[ "$(gotestsum --version 2>/dev/null || true)" == *"${GOTESTSUM_VERSION#v}"* ]]; then
    echo "install-deps: gotestsum ${GOTESTSUM_VERSION} already installed"
  else
    echo "install-deps: go install gotest.tools/gotestsum@${GOTESTSUM_VERSION}"
    GOBIN="$BIN_DIR" go install "gotest.tools/gotestsum@${GOTESTSUM_VERSION}"
  fi
fi

# --with-stacks: the Debian packages of the client stacks under agents/
# (each declares its own in agents/NAME/stack.json, which
# go run ./agents/stackfile/packages lists). dbsock installs the agents
# themselves at their first use, into the user's cache (docs/agents.md):
# this part does only what needs root. Debian's node-* packages depend on
# Debian's nodejs, which would replace a node installed otherwise: a stack
# that unpacks packages (Node.js) has them downloaded, with the packages
# of their closure, into /var/cache/dbsock/debs/NAME, never installed;
# dbsock unpacks them with dpkg-deb -x. The C agent and floor-pingpong are
# also built here, in agents/c, which scripts/peers.sh and
# scripts/stability.sh run.
if $with_stacks; then
  root=$(cd "$(dirname "$0")/.." && pwd)
  if ! listing=$(cd "$root" && GOFLAGS=-mod=mod go run ./agents/stackfile/packages); then
    echo "install-deps: could not list the client stacks' packages (go run ./agents/stackfile/packages in $root)" >&2
    exit 1
  fi
  stacks=()
  unpacks=()
  while read -r kind rest; do
    case "$kind" in
      install) stacks+=("$rest") ;;
      unpack) unpacks+=("$rest") ;;
    esac
  done <<< "$listing"
  missing=()
  for p in "${stacks[@]}"; do
    [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" == *"ok installed"* ]] || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ] || [ ${#unpacks[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "install-deps: need root to apt-get install ${missing[*]} and download the packages the stacks unpack; run: sudo $0 --with-stacks" >&2
      exit 1
    fi
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    # Package lists older than a day (or none) are refreshed once.
    if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
      apt-get update -qq
    fi
    echo "install-deps: apt-get install ${missing[*]}"
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}" >/dev/null
  fi
  for u in "${unpacks[@]}"; do
    read -r name dir within pkgs <<< "$u"
    read -ra pkgs <<< "$pkgs"
    if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "${pkgs[*]}" ]; then
      echo "install-deps: the $name stack's packages already in $dir"
      continue
    fi
    # The packages and every one of their closure whose name begins with $within.
    mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
      --no-breaks --no-replaces --no-enhances "${pkgs[@]}" | sed -n "s/^\(${within}[a-z0-9.+-]*\)\$/\1/p" | sort -u)
    echo "install-deps: apt-get download ${#closure[@]} ${within}* packages for the $name stack into $dir (dbsock unpacks them at its first use)"
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && apt-get download -qq -o APT::Sandbox::User=root "${closure[@]}" >/dev/null)
    chmod 755 "$dir"
    chmod 644 "$dir"/*.deb
    echo "${pkgs[*]}" > "$dir/.complete"
  done
  echo "install-deps: building the C agent and floor-pingpong (make -C agents/c) for scripts/peers.sh and stability.sh"
  # A make of its own: make test's job server (MAKEFLAGS) is not passed
  # through this script.
  MAKEFLAGS= make -s -C "$root/agents/c"
  mkdir -p "$root/agents/.stacks"
  echo "every stack's packages" > "$root/agents/.stacks/complete"
fi
