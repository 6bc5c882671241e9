#!/usr/bin/env bash
# Vets and tests deploy/kubernetes, the module of its own that writes
# dbsock's Kubernetes manifest (dbsock's module carries none of
# Kubernetes' dependencies, so its go test ./... does not reach it): its
# committed manifest against the generator, the strict decoding, and the
# manifest's pod run under Docker (skipped with -short, or where Docker or
# dbsock/redis:7.0 is not here unless DBSOCK_REQUIRE_SERVERS is set). Its
# modules come from the Go module proxy.
#   scripts/deploy-kubernetes.sh [go test flags, e.g. -short]
set -euo pipefail
cd "$(dirname "$0")/../deploy/kubernetes"
GO=${GO:-go}
export GO
"$GO" vet ./...
../../scripts/gotest.sh -count=1 -timeout 10m "$@" ./...
