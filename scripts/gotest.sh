#!/bin/sh
# gotest.sh GO-TEST-ARGS...: go test through gotestsum (a line per
# package, a failing test's output in full, a summary), then the 15
# slowest tests of the run, so that a contributor sees where make test's
# time goes. Where gotestsum is not installed (scripts/install-deps.sh
# --with-browser installs it), plain go test. Exits with go test's status.
set -u
if ! command -v gotestsum >/dev/null 2>&1; then
  echo "gotest: gotestsum is not installed (scripts/install-deps.sh --with-browser installs it): plain go test, without the slowest tests" >&2
  exec "${GO:-go}" test "$@"
fi
json=$(mktemp)
trap 'rm -f "$json"' EXIT
gotestsum --format pkgname --jsonfile "$json" --raw-command -- "${GO:-go}" test -json "$@"
status=$?
echo "gotest: the 15 slowest tests of this run (their subtests are in their times):"
gotestsum tool slowest --jsonfile "$json" --threshold 1ms | awk '$2 !~ /\//' | head -n 15
exit $status
