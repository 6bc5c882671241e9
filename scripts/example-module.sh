#!/usr/bin/env bash
# Runs examples/yourquery as a library user's module: copied outside this
# repository, with no replace directive, it gets dbsock from a module proxy
# that serves this checkout's HEAD commit at its pseudo-version (go run
# ./scripts/modproxy), the way a user's module gets a version (docs/library.md
# has the replace directive a user's module takes until dbsock is published).
#   scripts/example-module.sh [go test flags, e.g. -short]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
version="$(cd "$root" && go run ./scripts/modproxy "$work/proxy")"
cp -r "$root/examples/yourquery" "$work/yourquery"
cd "$work/yourquery"
export GOPROXY="file://$work/proxy,$(go env GOPROXY)"
export GONOSUMDB=github.com/dbsock/dbsock # served from the checkout: no public checksum
export GOFLAGS="$(go env GOFLAGS) -mod=mod"
echo "example-module: github.com/dbsock/dbsock@$version, in $work/yourquery" >&2
go mod edit -require="github.com/dbsock/dbsock@$version" # what go get ...@VERSION writes
go mod tidy
go vet ./...
go test -count=1 "$@" ./...
