#!/bin/sh
# cross.sh: proves that dbsock compiles, tests included, where Go users run
# it (macOS and Linux, amd64 and arm64), at the cost of one platform per
# operating system: go vet type-checks every package and test, and go
# build links the command.
#   - this machine's platform, with its own settings (make vet's, so the
#     build cache it filled serves it);
#   - darwin/arm64: what differs by operating system (the *_other.go
#     files, whose code macOS compiles and Linux does not);
#   - the other architecture of each operating system, for the packages
#     whose files differ between amd64 and arm64 (go list says which,
#     without compiling anything): none today, so what darwin/amd64 and
#     linux/arm64 compile is what darwin/arm64 and linux/amd64 do.
set -eu
GO=${GO:-go}

step() { echo "cross: $*"; }

step "$($GO env GOOS)/$($GO env GOARCH) (this machine)"
$GO vet ./...
$GO build -o /dev/null ./cmd/dbsock

step "darwin/arm64"
GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $GO vet ./...
GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $GO build -o /dev/null ./cmd/dbsock

files='{{.ImportPath}} {{.GoFiles}} {{.CgoFiles}} {{.SFiles}} {{.TestGoFiles}} {{.XTestGoFiles}}'
for os in linux darwin; do
  a=$(GOOS=$os GOARCH=amd64 CGO_ENABLED=0 $GO list -f "$files" ./...)
  b=$(GOOS=$os GOARCH=arm64 CGO_ENABLED=0 $GO list -f "$files" ./...)
  pkgs=$(printf '%s\n%s\n' "$a" "$b" | sort | uniq -u | cut -d' ' -f1 | sort -u)
  for arch in amd64 arm64; do
    case $os/$arch in
      "$($GO env GOOS)/$($GO env GOARCH)" | darwin/arm64) continue ;;
    esac
    if [ -z "$pkgs" ]; then
      step "$os/$arch: no package has files of its own for amd64 or arm64 (go list), so nothing compiles differently"
      continue
    fi
    step "$os/$arch: the packages whose files differ by architecture:" $pkgs
    # shellcheck disable=SC2086 # one argument per package
    GOOS=$os GOARCH=$arch CGO_ENABLED=0 $GO vet $pkgs
  done
done
